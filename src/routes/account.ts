import { PASSWORD_ONLY, type Amr, type AmrValue } from '../auth/amr.js';
import { accountStillSignedIn, requireProtectionChange, requireTwoFactorToAdd } from '../auth/session.js';
import { newMachineToken } from '../auth/machine-tokens.js';
import { AuthRequired, MachineTokenNotFound, TotpAlreadyEnabled, WrongPassword } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { throttleKeyOf } from '../http/client-address.js';
import { sendJson } from '../http/respond.js';
import { changeUser, withNewSessions } from '../store/account-rules.js';
import { addMachineToken, removeMachineToken } from '../store/machine-token-rules.js';
import { passwordChecker } from '../validate/auth.js';
import { objectOf, stringOf, type Checker } from '../validate/check.js';
import { checkMachineTokenId, checkNewMachineTokenBody } from '../validate/machine-token.js';
import { hashKeyOf, throttledMatch } from './auth.js';
import { readCheckedBody, type RequestContext, type Route, type RouteDeps, stillSignedIn } from './context.js';
import { renderQrSvg } from '../qr/svg.js';


const NO_STORE = { 'cache-control': 'no-store' } as const;
const checkPasswordBody = objectOf({ password: passwordChecker(1) });
const checkCodeBody = objectOf({ code: stringOf({ minLength: 1, maxLength: 64 }) });

/**
 * The caller's own account (INTERFACE.md "The caller's own account"): any valid session of the
 * account, never a machine token, and open to an administrator's one-factor session even when
 * administrators need two factors (this is where they set one up), but for making a machine token.
 */
export function accountRoutes(deps: RouteDeps): Route[] {
  const { config, store, session, hasher, throttle, logger, cookies } = deps;
  const newPasswordBody = objectOf({
    password: passwordChecker(1),
    newPassword: passwordChecker(config.minPasswordLength),
  });
  const nowSeconds = (): number => Math.floor(deps.now() / 1000);
  const owner = (ctx: RequestContext) => requireProtectionChange(session.authenticateAnyFactor(ctx.credentials));

  /**
   * The owner and the body, once its `password` is the account's: checked under the login throttle
   * (a stolen session must not become a way to guess it), 429 when throttled, 403 WrongPassword when wrong.
   */
  const withPassword = async <T extends { readonly password: string }>(ctx: RequestContext, check: Checker<T>) => {
    const caller = owner(ctx);
    const body = await readCheckedBody(ctx, check, config.maxBodyBytes);
    const { username, passwordHash } = caller.user;
    const key = hashKeyOf(ctx.address, caller);
    const matches = await throttledMatch(deps, ctx, { username, password: body.password, hash: passwordHash, key });
    if (!matches) {
      logger.warn('wrong current password on the account page', {
        event: 'login_failed',
        address: ctx.address,
        username,
      });
      throw new WrongPassword();
    }
    // Uncount this attempt only: earlier failures (guessed codes among them) stay counted.
    throttle.cancelAttempt(username, throttleKeyOf(ctx.address));
    return { caller, body };
  };

  return [
    { method: 'GET', path: '/api/auth/account', body: 'none', handler(ctx) {
      const { user } = session.authenticateAnyFactor(ctx.credentials);
      sendJson(ctx.res, 200, {
        username: user.username,
        level: user.level,
        groups: user.groups ?? [],
        totp: user.totp !== undefined,
        // Times in milliseconds since the epoch, null when none; never a key, token or digest.
        passkeys: (user.passkeys ?? []).map(({ id, name, createdAt, lastUsedAt }) => {
          return { id, name, createdAt: createdAt * 1000, lastUsedAt: ms(lastUsedAt) };
        }),
        tokens: (user.tokens ?? []).map(({ id, name, createdAt, expiresAt, lastUsedAt }) => {
          return { id, name, createdAt: createdAt * 1000, expiresAt: ms(expiresAt), lastUsedAt: ms(lastUsedAt) };
        }),
      });
    } },
    { method: 'POST', path: '/api/auth/account/password', body: 'json', async handler(ctx) {
      const { caller, body } = await withPassword(ctx, newPasswordBody);
      const passwordHash = await hasher.hash(body.newPassword, hashKeyOf(ctx.address, caller));
      const updated = await store.change((view) => {
        const user = stillSignedIn(deps, view, caller);
        // A password change is a credential change: changeUser gives the account a new session key.
        changeUser(view, user.username, { passwordHash }, nowSeconds());
        return view.get(user.username);
      });
      if (updated === undefined) throw new AuthRequired();
      deps.totp.forget(updated.username);
      logger.info('password changed by its owner', {
        event: 'password_changed',
        address: ctx.address,
        username: updated.username,
      });
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.issue(ctx, updated, caller.claims.amr) });
    } },
    { method: 'POST', path: '/api/auth/account/totp', body: 'json', async handler(ctx) {
      const { caller } = await withPassword(ctx, checkPasswordBody);
      const user = accountStillSignedIn((name) => store.find(name), caller, deps.revocations);
      if (user.totp !== undefined) throw new TotpAlreadyEnabled();
      const { secret, uri } = deps.totp.begin(user, deps.now());
      // no-store: the answer holds the seed.
      sendJson(ctx.res, 200, { secret, uri, qr: renderQrSvg(uri) }, NO_STORE);
    } },
    { method: 'POST', path: '/api/auth/account/totp/confirm', body: 'json', async handler(ctx) {
      const caller = owner(ctx);
      const body = await readCheckedBody(ctx, checkCodeBody, config.maxBodyBytes);
      const user = accountStillSignedIn((name) => store.find(name), caller, deps.revocations);
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
      const cookie = cookies.issue(ctx, updated, amrWith(caller.claims.amr, 'otp'));
      sendJson(ctx.res, 200, { recoveryCodes: confirmed.recoveryCodes }, { 'set-cookie': cookie, ...NO_STORE });
    } },
    { method: 'POST', path: '/api/auth/account/totp/disable', body: 'json', async handler(ctx) {
      const { caller } = await withPassword(ctx, checkPasswordBody);
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
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.issue(ctx, updated, amrWithout(caller.claims.amr, 'otp')) });
    } },
    { method: 'POST', path: '/api/auth/account/logout-everywhere', body: 'json', async handler(ctx) {
      const caller = session.authenticateAnyFactor(ctx.credentials);
      await readJsonBody(ctx.req, config.maxBodyBytes);
      await store.change((view) => view.set(withNewSessions(stillSignedIn(deps, view, caller), nowSeconds())));
      deps.totp.forget(caller.user.username);
      logger.info('every session ended by the account owner', {
        event: 'logout_everywhere',
        address: ctx.address,
        username: caller.user.username,
      });
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.cleared(ctx) });
    } },
    // Machine tokens (SECURITY.md "Machine tokens, groups and accounts without client settings"):
    // made and revoked by a session only; a machine token arrives in Authorization, which nothing
    // here reads, so no token can make or remove tokens. A token passes `tokens=1` with no second
    // factor, so making one takes a session that passes `--require-mfa-for-admins` (authenticate)
    // and, once the account has a second factor, a two-factor one (requireTwoFactorToAdd).
    // Revoking takes any session of the account, so a leaked token can always be revoked.
    { method: 'POST', path: '/api/auth/account/tokens', body: 'json', async handler(ctx) {
      const caller = requireTwoFactorToAdd(session.authenticate(ctx.credentials));
      const { name, days } = await readCheckedBody(ctx, checkNewMachineTokenBody, config.maxBodyBytes);
      const { token, digest, id } = newMachineToken();
      const createdAt = nowSeconds();
      const expiresAt = days === undefined ? undefined : createdAt + days * 86_400;
      await store.change((view) => {
        stillSignedIn(deps, view, caller);
        addMachineToken(view, caller.user.username, {
          id,
          name,
          digest,
          createdAt,
          ...(expiresAt === undefined ? {} : { expiresAt }),
        });
      });
      // The id names the token in logs; the token itself is never logged.
      logger.info('machine token created', {
        event: 'machine_token_created',
        username: caller.user.username,
        tokenId: id,
        address: ctx.address,
      });
      sendJson(ctx.res, 200, { id, name, token, expiresAt: ms(expiresAt) }, NO_STORE);
    } },
    { method: 'DELETE', path: '/api/auth/account/tokens/:id', body: 'none', async handler(ctx) {
      const caller = session.authenticateAnyFactor(ctx.credentials);
      // A malformed id names no token: the same 404 as an unknown one.
      const id = checkMachineTokenId(ctx.param ?? '', 'id');
      if (!id.ok) throw new MachineTokenNotFound();
      await store.change((view) => {
        stillSignedIn(deps, view, caller);
        removeMachineToken(view, caller.user.username, id.value);
      });
      logger.info('machine token revoked', {
        event: 'machine_token_revoked',
        username: caller.user.username,
        tokenId: id.value,
        address: ctx.address,
      });
      sendJson(ctx.res, 200, {});
    } },
  ];
}

/** Seconds since the epoch as the account API shows them: milliseconds, null when none. */
function ms(seconds: number | undefined): number | null {
  return seconds === undefined ? null : seconds * 1000;
}

function amrWith(amr: Amr | undefined, value: AmrValue): Amr {
  const base = amr ?? PASSWORD_ONLY;
  return base.includes(value) ? base : Object.freeze([...base, value]);
}

function amrWithout(amr: Amr | undefined, value: AmrValue): Amr {
  const rest = (amr ?? PASSWORD_ONLY).filter((item) => item !== value);
  return rest.length === 0 ? PASSWORD_ONLY : Object.freeze(rest);
}
