import { amrAfterChange } from '../auth/amr.js';
import { newMachineToken } from '../auth/machine-tokens.js';
import { hashKeyOf } from '../auth/throttled-password.js';
import { AuthRequired, MachineTokenNotFound } from '../errors.js';
import { readJsonBody } from '../http/body.js';
import { sendJson } from '../http/respond.js';
import { changeUser, withNewSessions } from '../store/account-rules.js';
import { addMachineToken, removeMachineToken } from '../store/machine-token-rules.js';
import { passwordChecker } from '../validate/auth.js';
import { objectOf } from '../validate/check.js';
import { checkMachineTokenId, checkNewMachineTokenBody } from '../validate/machine-token.js';
import { callerOf, readCheckedBody, type Route, type RouteDeps, stillSignedIn } from './context.js';
import { epochSeconds, type EpochMs, type EpochSeconds } from '../time.js';


/**
 * The caller's own account (docs/contract/accounts.md "The caller's own account"); its TOTP is totp/routes.ts's,
 * its passkeys src/passkeys/'s. Who may do each is the access
 * table's (auth/access.ts): a session cookie of the account; a change of a way in also the current
 * password in the body (ctx.admission.confirmPassword) and, once the account has a second factor, a
 * two-factor session; taking access away any session of the account.
 */
export function accountRoutes(deps: RouteDeps): Route[] {
  const { config, store, hasher, logger, cookies } = deps;
  const newPasswordBody = objectOf({
    password: passwordChecker(1),
    newPassword: passwordChecker(config.passwordMinimums.gatehouse),
  });
  const nowSeconds = (): EpochSeconds => epochSeconds(deps.now());

  return [
    { method: 'GET', path: '/api/auth/account', access: 'showAccount', body: 'none', handler(ctx) {
      const { user } = callerOf(ctx);
      sendJson(ctx.res, 200, {
        username: user.username,
        level: user.level,
        groups: user.groups ?? [],
        // OpenID Connect's e-mail address and display name, when the account has them.
        ...(user.email === undefined ? {} : { email: user.email, emailVerified: user.emailVerified === true }),
        ...(user.name === undefined ? {} : { name: user.name }),
        totp: user.totp !== undefined,
        // Times in milliseconds (EpochMs), null when none; never a key, token or digest.
        passkeys: (user.passkeys ?? []).map(({ id, name, createdAt, lastUsedAt }) => {
          return { id, name, createdAt: createdAt * 1000, lastUsedAt: ms(lastUsedAt) };
        }),
        tokens: (user.tokens ?? []).map(({ id, name, createdAt, expiresAt, lastUsedAt }) => {
          return { id, name, createdAt: createdAt * 1000, expiresAt: ms(expiresAt), lastUsedAt: ms(lastUsedAt) };
        }),
      });
    } },
    { method: 'POST', path: '/api/auth/account/password', access: 'changePassword', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, newPasswordBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(body.password);
      const passwordHash = await hasher.hash(body.newPassword, hashKeyOf(ctx.address, caller));
      const updated = await store.change((view) => {
        const user = stillSignedIn(deps, view, caller);
        // A password change is a credential change: changeUser gives the account a new session key.
        changeUser(view, user.username, { passwordHash }, nowSeconds());
        return view.get(user.username);
      });
      if (updated === undefined) throw new AuthRequired();
      deps.credentialChanges.changed(updated.username);
      logger.info('password changed by its owner', {
        event: 'password_changed',
        address: ctx.address,
        username: updated.username,
      });
      // This session goes on under the account's new key; every other one has ended.
      const cookie = await cookies.carryOver(ctx, caller, updated, amrAfterChange(caller.claims.amr, updated));
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookie });
    } },
    { method: 'POST', path: '/api/auth/account/logout-everywhere', access: 'logoutEverywhere', body: 'json', async handler(ctx) {
      const caller = callerOf(ctx);
      await readJsonBody(ctx.req, config.maxBodyBytes);
      await store.change((view) => view.set(withNewSessions(stillSignedIn(deps, view, caller), nowSeconds())));
      deps.credentialChanges.changed(caller.user.username);
      logger.info('every session ended by the account owner', {
        event: 'logout_everywhere',
        address: ctx.address,
        username: caller.user.username,
      });
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookies.cleared(ctx) });
    } },
    // Machine tokens: made and revoked by a session only (a machine token counts at the gate alone).
    // Revoking takes any session of the account, so a leaked token can always be revoked.
    { method: 'POST', path: '/api/auth/account/tokens', access: 'makeMachineToken', body: 'json', async handler(ctx) {
      const { name, days, password } = await readCheckedBody(ctx, checkNewMachineTokenBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
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
      sendJson(ctx.res, 200, { id, name, token, expiresAt: ms(expiresAt) });
    } },
    { method: 'DELETE', path: '/api/auth/account/tokens/:id', access: 'revokeMachineToken', body: 'none', async handler(ctx) {
      const caller = callerOf(ctx);
      // A malformed id names no token: the same 404 as an unknown one.
      const id = checkMachineTokenId(ctx.params['id'] ?? '', 'id');
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

/** A stored time as the account API shows it: milliseconds, null when none. */
function ms(seconds: EpochSeconds | undefined): EpochMs | null {
  return seconds === undefined ? null : seconds * 1000;
}
