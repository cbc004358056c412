// Passkey sign-in challenges under a flood, over real HTTP behind a trusted proxy
// (docs/contract/access.md "Decoys"): one network (an IPv4 address, an IPv6 /56) holds at most 64, its 65th
// dropping its own oldest; no challenge is dropped for another network's before it expires.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertError, createUser, startPopulatedServer, type TestUser } from '../helpers/api.js';
import { addPasskey, HOST, newAuthenticator, requestOptions } from '../helpers/passkeys.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import type { SoftAuthenticator } from '../helpers/soft-authenticator.js';

/** Headers of a request from `address`, as our trusted proxy forwards it. */
const from = (address: string): Record<string, string> => ({ host: HOST, 'x-forwarded-for': address });

/** The address of the i-th /64 of the home /56 2001:db8:a:1200::/56 (i < 256). */
const homeAddress = (i: number): string => `2001:db8:a:${(0x1200 + i).toString(16)}::1`;

describe('passkey sign-in challenges under a flood', () => {
  let server: TestServer;
  let root: TestUser;
  let authenticator: SoftAuthenticator;
  before(async () => {
    ({ server, root } = await startPopulatedServer({ GATEHOUSE_TRUST_PROXY: '127.0.0.1' }));
    const user = await createUser(server, root.token, { level: 5 });
    authenticator = newAuthenticator();
    const added = await addPasskey(server, user.token, user.password, authenticator);
    assert.equal(added.status, 200, added.text);
  });
  after(() => server.close());

  const signInWith = (challenge: string): Promise<TestResponse> =>
    server.request({ method: 'POST', path: '/api/auth/passkey', headers: from('192.0.2.200'), body: { credential: authenticator.get({ challenge, rpId: 'localhost' }) } });

  it('lets one home /56 hold 64 challenges across its /64s, its 65th dropping its own oldest, nobody else\'s', async () => {
    const honest = await requestOptions(server, undefined, from('198.51.100.7'));
    const flood: string[] = [];
    for (let i = 0; i < 65; i++) flood.push((await requestOptions(server, undefined, from(homeAddress(i)))).challenge);
    assertError(await signInWith(flood[0] ?? ''), 401, 'PASSKEY_REFUSED');
    assert.equal((await signInWith(honest.challenge)).status, 200, 'another network keeps its challenge');
    assert.equal((await signInWith(flood[1] ?? '')).status, 200);
    assert.equal((await signInWith(flood[64] ?? '')).status, 200);
  });

  it('answers 503 TOO_MANY_CHALLENGES with Retry-After once a /48 holds 1,024, and drops none of them', async () => {
    // 16 homes of one /48, 64 each: the /48's share. (The clock stands still: none expires.)
    const held: string[] = [];
    for (let home = 0; home < 16; home++) {
      for (let i = 0; i < 64; i++) {
        held.push((await requestOptions(server, undefined, from(`2001:db8:b:${(home << 8 | i).toString(16)}::1`))).challenge);
      }
    }
    const refused = await server.request({ method: 'POST', path: '/api/auth/passkey/options', headers: from('2001:db8:b:1000::1'), body: {} });
    assertError(refused, 503, 'TOO_MANY_CHALLENGES');
    assert.equal(refused.headers['retry-after'], '300');
    assert.equal((await requestOptions(server, undefined, from('2001:db8:c::1'))).rpId, 'localhost', 'another /48 is served');
    assert.equal((await signInWith(held[0] ?? '')).status, 200, 'the oldest of the /48 was kept');
  });
});
