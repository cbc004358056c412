import { amrAfterChange } from '../auth/amr.js';
import { TotpAlreadyEnabled } from '../errors.js';
import { sendJson } from '../http/respond.js';
import { renderQrSvg } from './qr-svg.js';
import { withNewSessions } from '../store/account-rules.js';
import { passwordChecker } from '../validate/auth.js';
import { objectOf, stringOf } from '../validate/check.js';
import { callerOf, readCheckedBody, type Route, type RouteDeps, stillSignedIn } from '../routes/context.js';
import { epochSeconds, type EpochSeconds } from '../time.js';
import type { TotpAccounts } from './accounts.js';

const checkPasswordBody = objectOf({ password: passwordChecker(1) });
const checkCodeBody = objectOf({ code: stringOf({ minLength: 1, maxLength: 64 }) });

/**
 * The caller's own TOTP (docs/contract/accounts.md "The caller's own account"): begin a set-up with the password,
 * confirm it with a code, turn it off with the password. Who may do each is the access table's
 * (auth/access.ts rows beginTotp, confirmTotp, disableTotp); the set-up itself is totp/accounts.ts.
 */
export function totpRoutes(deps: RouteDeps & { readonly totp: TotpAccounts }): Route[] {
  const { config, store, logger, cookies } = deps;
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());

  return [
    { method: 'POST', path: '/api/auth/account/totp', access: 'beginTotp', body: 'json', async handler(ctx) {
      const { password } = await readCheckedBody(ctx, checkPasswordBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const user = stillSignedIn(deps, store, caller);
      if (user.totp !== undefined) throw new TotpAlreadyEnabled();
      const { secret, uri } = deps.totp.begin(user, deps.now());
      // no-store: the answer holds the seed.
      sendJson(ctx.res, 200, { secret, uri, qr: renderQrSvg(uri) });
    } },
    { method: 'POST', path: '/api/auth/account/totp/confirm', access: 'confirmTotp', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      const body = await readCheckedBody(ctx, checkCodeBody, config.maxBodyBytes);
      const user = stillSignedIn(deps, store, caller);
      if (user.totp !== undefined) throw new TotpAlreadyEnabled();
      const confirmed = deps.totp.confirm(user, body.code, deps.now());
      const updated = await store.change((view) => {
        const latest = stillSignedIn(deps, view, caller);
        if (latest.totp !== undefined) throw new TotpAlreadyEnabled();
        const next = withNewSessions({ ...latest, totp: confirmed.totp }, nowSeconds());
        view.set(next);
        return next;
      });
      deps.totp.forget(updated.username);
      logger.info('TOTP set up', { event: 'totp_enabled', address: ctx.address, username: updated.username });
      // This session proved the new authenticator: it goes on, now with two factors.
      const cookie = await cookies.carryOver(ctx, caller, updated, amrAfterChange(caller.claims.amr, updated, 'otp'));
      sendJson(ctx.res, 200, { recoveryCodes: confirmed.recoveryCodes }, { 'set-cookie': cookie });
    } },
    { method: 'POST', path: '/api/auth/account/totp/disable', access: 'disableTotp', body: 'json', async handler(ctx) {
      const { password } = await readCheckedBody(ctx, checkPasswordBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const updated = await store.change((view) => {
        const { totp, ...rest } = stillSignedIn(deps, view, caller);
        if (totp === undefined) return undefined;
        const next = withNewSessions(rest, nowSeconds());
        view.set(next);
        return next;
      });
      deps.totp.forget(caller.user.username);
      if (updated === undefined) {
        sendJson(ctx.res, 200, {});
        return;
      }
      logger.info('TOTP removed by its owner', {
        event: 'totp_disabled',
        address: ctx.address,
        username: updated.username,
      });
      // This session goes on under the account's new key; every other one has ended.
      const cookie = await cookies.carryOver(ctx, caller, updated, amrAfterChange(caller.claims.amr, updated));
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookie });
    } },
  ];
}
