// TOTP for a test account over the API: set up and confirmed, returning the seed and the two-factor
// session the confirmation hands out.
import assert from 'node:assert/strict';
import { decodeBase32 } from '../../src/totp/base32.js';
import { totpCode } from '../../src/totp/codes.js';
import type { TestUser } from './api.js';
import type { TestServer } from './server.js';

export async function enrolTotp(server: TestServer, user: TestUser): Promise<{ seed: Buffer; token: string }> {
  const begun = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
  assert.equal(begun.status, 200, begun.text);
  const seed = decodeBase32((begun.json as { secret: string }).secret);
  assert.ok(seed !== undefined);
  const confirmed = await server.request({ method: 'POST', path: '/api/auth/account/totp/confirm', token: user.token, body: { code: totpCode(seed, server.clock.now()) } });
  assert.equal(confirmed.status, 200, confirmed.text);
  assert.ok(confirmed.cookieToken !== undefined);
  return { seed, token: confirmed.cookieToken };
}
