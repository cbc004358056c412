// The account page's authenticator app (TOTP) section's markup and style: set it up with the
// password (a QR code and the key as text), confirm with a code, save the ten recovery codes shown
// once, turn it off. Its script is browser/account-section.entry.ts.
import { BUILT_SCRIPTS } from '../pages/built-scripts.js';
import type { PageSection } from '../pages/shell.js';

const BODY = `
<section id="totp-section">
<h2>Authenticator app</h2>
<div id="totp-off" hidden>
<p>A code from an app such as Aegis, Google Authenticator or 1Password, asked for after your password.</p>
<form id="totp-start" method="post">
<label for="totp-password">Your password</label>
<input id="totp-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Set up an authenticator app</button>
</form>
</div>
<div id="totp-pending" hidden>
<p>Scan this code with your authenticator app:</p>
<img id="totp-qr" class="qr" alt="QR code of the authenticator app setup link">
<p class="muted">Or enter this key by hand (time-based, 6 digits, every 30 seconds):</p>
<p><code id="totp-secret" class="secret"></code></p>
<form id="totp-confirm" method="post">
<label for="totp-code">The code your app shows now</label>
<input id="totp-code" name="code" autocomplete="one-time-code" inputmode="numeric" autocapitalize="none" spellcheck="false" maxlength="64" required>
<button type="submit">Confirm</button>
<button type="button" id="totp-cancel" class="secondary">Cancel</button>
</form>
</div>
<div id="totp-codes" hidden>
<p class="message done">The authenticator app is set up. From now on, signing in asks for a code.</p>
<p>Recovery codes: each works once instead of a code, if you lose the app. <strong>Save them now: they are not shown again.</strong></p>
<ol id="recovery-codes" class="codes"></ol>
<button type="button" id="codes-saved">I have saved them</button>
</div>
<div id="totp-on" hidden>
<p>On: signing in with your password asks for a code from your app (or a recovery code).</p>
<form id="totp-disable" method="post">
<label for="totp-disable-password">Your password, to turn it off</label>
<input id="totp-disable-password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="danger">Turn off the authenticator app</button>
</form>
</div>
<p id="totp-message" class="message" role="alert" hidden></p>
</section>
`;

const STYLE = `
img.qr{display:block;width:12rem;height:12rem;margin:0 0 1rem;border:1px solid #e1e4ea;border-radius:4px;image-rendering:pixelated}
ol.codes{columns:2;margin:0 0 1rem;padding:.75rem 1rem .75rem 2.25rem;border-radius:4px;background:#f0f2f5;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
ol.codes li{margin:0 0 .2rem;white-space:nowrap}
#totp-cancel{margin-left:.5rem}
@media (max-width:30rem){ol.codes{columns:1}#totp-cancel{margin-left:0}}
@media (prefers-color-scheme:dark){ol.codes{background:#2a2f39}img.qr{border-color:#363c48}}
`;

/** First on the account page, before its own sections. */
export const TOTP_SECTION: PageSection = Object.freeze({ body: BODY, style: STYLE, built: BUILT_SCRIPTS['totp/account-section'], place: 'first' });
