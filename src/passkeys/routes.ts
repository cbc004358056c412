import { amrAfterChange, passkeyAmr } from '../auth/amr.js';
import { readJsonBody } from '../http/body.js';
import { sendJson } from '../http/respond.js';
import { checkNewPasskeyBody, checkPasskeyOptionsBody, checkPasskeyRemovalBody, checkPasskeySignInBody } from './checks.js';
import type { PasskeyService } from './ceremonies.js';
import { callerOf, readCheckedBody, type RequestContext, type Route, type RouteDeps } from '../routes/context.js';

interface PasskeyRouteDeps extends RouteDeps {
  readonly passkeys: PasskeyService;
}

/**
 * Passkeys (WebAuthn Level 3): sign-in options and sign-in for anyone, and the caller's own
 * passkeys (docs/contract/accounts.md "Passkeys", "The caller's own account"). Each route reads its
 * body, confirms the password where its row asks, and answers with what the ceremony
 * (passkeys/ceremonies.ts) returns; a sign-in, an addition or a removal sets the cookie.
 */
export function passkeyRoutes(deps: PasskeyRouteDeps): Route[] {
  const { config, cookies, passkeys } = deps;
  /** Who asks, for the ceremony: the host the browser sent the request to (behind a trusted proxy, the forwarded one), the address. */
  const askerOf = (ctx: RequestContext) => ({ host: deps.proxyTrust.browserHost(ctx.req), address: ctx.address });

  return [
    { method: 'POST', path: '/api/auth/passkey/options', access: 'passkeySignInOptions', body: 'json', async handler(ctx) {
      const body = await readCheckedBody(ctx, checkPasskeyOptionsBody, config.maxBodyBytes);
      sendJson(ctx.res, 200, passkeys.signInOptions(askerOf(ctx), body.username));
    } },
    { method: 'POST', path: '/api/auth/passkey', access: 'passkeySignIn', body: 'json', async handler(ctx) {
      const { credential } = await readCheckedBody(ctx, checkPasskeySignInBody, config.maxBodyBytes);
      const { user, isUserVerified } = await passkeys.signIn(askerOf(ctx), credential);
      sendJson(
        ctx.res,
        200,
        { success: true, username: user.username, level: user.level },
        { 'set-cookie': await cookies.begin(ctx, user, passkeyAmr(isUserVerified)) },
      );
    } },
    {
      method: 'POST', path: '/api/auth/account/passkeys/options', access: 'passkeyCreationOptions', body: 'json',
      async handler(ctx) {
        const caller = callerOf(ctx);
        // Nothing is read from a body; one sent (`{}`) is accepted and dropped.
        await readJsonBody(ctx.req, config.maxBodyBytes);
        sendJson(ctx.res, 200, passkeys.creationOptions(askerOf(ctx), caller.user));
      },
    },
    { method: 'POST', path: '/api/auth/account/passkeys', access: 'addPasskey', body: 'json', async handler(ctx) {
      const { name, credential, password } = await readCheckedBody(ctx, checkNewPasskeyBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const { user, id } = await passkeys.add(askerOf(ctx), caller, name, credential);
      // Every other session ends; this one goes on under a new cookie, claiming what it proved.
      const cookie = await cookies.carryOver(ctx, caller, user, amrAfterChange(caller.claims.amr, user));
      sendJson(ctx.res, 200, { id, name }, { 'set-cookie': cookie });
    } },
    { method: 'DELETE', path: '/api/auth/account/passkeys/:id', access: 'removePasskey', body: 'json', async handler(ctx) {
      const { password } = await readCheckedBody(ctx, checkPasskeyRemovalBody, config.maxBodyBytes);
      const caller = await ctx.admission.confirmPassword(password);
      const user = await passkeys.remove(askerOf(ctx), caller, ctx.params['id']);
      const cookie = await cookies.carryOver(ctx, caller, user, amrAfterChange(caller.claims.amr, user));
      sendJson(ctx.res, 200, {}, { 'set-cookie': cookie });
    } },
  ];
}
