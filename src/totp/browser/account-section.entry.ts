// The account page's authenticator app (TOTP) section (totp/account-section.ts has its markup): set
// it up with the password (a QR code and the key as text), confirm with a code, save the ten recovery
// codes shown once, turn it off.
import { onAccountPage } from '../../pages/browser/account-page.js';
import { bodyOf, byId, element, fieldOf, onSubmit, problemOf, say } from '../../pages/browser/helpers.js';

onAccountPage((page) => {
  const totpMessage = byId('totp-message');
  const qr = byId('totp-qr', HTMLImageElement);
  const showTotp = (shown: string): void => {
    for (const id of ['totp-off', 'totp-pending', 'totp-codes', 'totp-on']) byId(id).hidden = id !== shown;
  };
  const showTotpState = (): void => {
    showTotp(page.account()?.['totp'] === true ? 'totp-on' : 'totp-off');
  };
  const clearSeed = (): void => {
    qr.removeAttribute('src');
    byId('totp-secret').textContent = '';
  };
  // A set-up in progress or codes on screen stay until the person moves on.
  page.onAccount(() => {
    if (byId('totp-pending').hidden && byId('totp-codes').hidden) showTotpState();
  });

  onSubmit(byId('totp-start', HTMLFormElement), (form) => {
    const request = { password: fieldOf(form, 'password').value };
    void page.send(form, totpMessage, 'POST', '../api/auth/account/totp', request).then((answer) => {
      if (answer.status === 401) return;
      const body = bodyOf(answer);
      const secret = body?.['secret'];
      const svg = body?.['qr'];
      if (typeof secret !== 'string' || typeof svg !== 'string') {
        say(totpMessage, problemOf(answer));
        return;
      }
      form.reset();
      // The QR code is an SVG made by the server. Shown as an image it runs no script and loads
      // nothing; the page's CSP allows data: images and nothing else.
      qr.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
      byId('totp-secret').textContent = secret.replace(/(.{4})(?=.)/g, '$1 ');
      showTotp('totp-pending');
      byId('totp-code').focus();
    });
  });
  onSubmit(byId('totp-confirm', HTMLFormElement), (form) => {
    const request = { code: fieldOf(form, 'code').value.trim() };
    void page.send(form, totpMessage, 'POST', '../api/auth/account/totp/confirm', request).then((answer) => {
      if (answer.status === 401) return;
      const codes = bodyOf(answer)?.['recoveryCodes'];
      if (!Array.isArray(codes)) {
        say(totpMessage, problemOf(answer));
        return;
      }
      form.reset();
      clearSeed();
      page.fill(byId('recovery-codes'), codes.map((code) => element('li', '', String(code))));
      showTotp('totp-codes');
      void page.reload();
    });
  });
  byId('totp-cancel').addEventListener('click', () => {
    clearSeed();
    say(totpMessage, '');
    showTotpState();
  });
  byId('codes-saved').addEventListener('click', () => {
    page.fill(byId('recovery-codes'), []);
    showTotpState();
  });
  onSubmit(byId('totp-disable', HTMLFormElement), (form) => {
    const request = { password: fieldOf(form, 'password').value };
    void page.change(form, totpMessage, 'POST', '../api/auth/account/totp/disable', request, 'The authenticator app is off; its recovery codes are gone.');
  });
});
