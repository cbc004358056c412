// OpenID Connect clients: the redirect URI rules, the record and its limits, the secret kept only
// as a digest.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientNameTaken, ClientNotFound, PublicClientSecret, TooManyClients } from '../../src/errors.js';
import {
  addClient, checkClientsDocument, checkNewClientBody, clientSummaryOf, EMPTY_CLIENTS, findClient, isClientSecret,
  newClientSecret, removeClient, replaceClientSecret, type ClientsDocument,
} from '../../src/oidc/clients.js';
import { MAX_CLIENTS, MAX_REDIRECT_URIS } from '../../src/oidc/limits.js';
import { checkRedirectUri } from '../../src/oidc/redirect-uri.js';

describe('redirect URIs', () => {
  const accepted = [
    'https://grafana.example.org/login/generic_oauth',
    'https://photos.example.org:8443/auth/login?from=oidc',
    'http://localhost:3000/callback',
    'http://127.0.0.1/cb',
    'http://[::1]:8080/cb',
    'app.immich:///oauth-callback',
    'com.example.app:/oauth2redirect',
  ];
  for (const uri of accepted) it(`accepts ${uri}`, () => assert.deepEqual(checkRedirectUri(uri, 'u'), { ok: true, value: uri }));

  const refused: ReadonlyArray<readonly [string, unknown]> = [
    ['plain http on a public host', 'http://app.example.org/cb'],
    ['plain http on a private address', 'http://192.168.1.10/cb'],
    ['a fragment', 'https://app.example.org/cb#x'],
    ['an empty fragment', 'https://app.example.org/cb#'],
    ['a relative URL', '/callback'],
    ['credentials', 'https://user:pw@app.example.org/cb'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,hi'],
    ['file:', 'file:///etc/passwd'],
    ['a space', 'https://app.example.org/a b'],
    ['non-ASCII', 'https://app.example.org/é'],
    ['a control character', 'https://app.example.org/\u0000'],
    ['too long', `https://app.example.org/${'a'.repeat(2048)}`],
    ['empty', ''],
    ['not a string', 42],
  ];
  for (const [name, uri] of refused) it(`refuses ${name}`, () => assert.equal(checkRedirectUri(uri, 'u').ok, false));
});

describe('a new client body', () => {
  const body = { name: 'Grafana', redirectUris: ['https://g.example.org/login/generic_oauth'] };
  it('takes name and redirect URIs, the rest optional', () => {
    const result = checkNewClientBody({ ...body, public: true, groups: ['ops'], mfa: true, alg: 'ES256', postLogoutRedirectUris: ['https://g.example.org/'] }, '');
    assert.ok(result.ok, JSON.stringify(result));
  });
  const refused: ReadonlyArray<readonly [string, unknown]> = [
    ['no redirect URI', { ...body, redirectUris: [] }],
    [`more than ${MAX_REDIRECT_URIS} redirect URIs`, { ...body, redirectUris: Array.from({ length: MAX_REDIRECT_URIS + 1 }, (_, i) => `https://g.example.org/${i}`) }],
    ['a repeated redirect URI', { ...body, redirectUris: ['https://a.example.org/', 'https://a.example.org/'] }],
    ['an alg other than RS256 or ES256', { ...body, alg: 'HS256' }],
    ['alg none', { ...body, alg: 'none' }],
    ['a bad group', { ...body, groups: ['Ops!'] }],
    ['public as a string', { ...body, public: 'yes' }],
    ['an empty name', { ...body, name: '' }],
    ['a name with a control character', { ...body, name: 'a\nb' }],
  ];
  for (const [name, input] of refused) it(`refuses ${name}`, () => assert.equal(checkNewClientBody(input, '').ok, false));
});

describe('client rules', () => {
  const fields = { name: 'Grafana', redirectUris: ['https://g.example.org/cb'] } as const;

  it('makes a confidential client with a 32-hex id, RS256 by default, its secret kept only as a digest', () => {
    const { secret, digest } = newClientSecret();
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    const { next, client } = addClient(EMPTY_CLIENTS, fields, digest, 100);
    assert.match(client.clientId, /^[0-9a-f]{32}$/);
    assert.equal(client.alg, 'RS256');
    assert.ok(isClientSecret(client, secret));
    assert.equal(isClientSecret(client, `${secret}x`), false);
    assert.equal(isClientSecret(client, ''), false);
    assert.equal(JSON.stringify(next).includes(secret), false);
    assert.equal(JSON.stringify(clientSummaryOf(client)).includes(digest), false);
    assert.ok(checkClientsDocument(JSON.parse(JSON.stringify(next)), '').ok);
  });

  it('makes a public client without a secret, that no secret authenticates', () => {
    const { client } = addClient(EMPTY_CLIENTS, { ...fields, public: true }, undefined, 100);
    assert.equal(client.public, true);
    assert.equal(client.secretDigest, undefined);
    assert.equal(isClientSecret(client, ''), false);
    assert.throws(() => replaceClientSecret({ ...EMPTY_CLIENTS, clients: [client] }, client.clientId, 'x'), PublicClientSecret);
  });

  it(`refuses a repeated name and a client beyond ${MAX_CLIENTS}`, () => {
    const one = addClient(EMPTY_CLIENTS, fields, newClientSecret().digest, 1).next;
    assert.throws(() => addClient(one, fields, newClientSecret().digest, 1), ClientNameTaken);
    let full: ClientsDocument = EMPTY_CLIENTS;
    for (let i = 0; i < MAX_CLIENTS; i++) full = addClient(full, { ...fields, name: `app ${i}` }, newClientSecret().digest, 1).next;
    assert.throws(() => addClient(full, { ...fields, name: 'one more' }, newClientSecret().digest, 1), TooManyClients);
    assert.ok(checkClientsDocument(JSON.parse(JSON.stringify(full)), '').ok);
  });

  it('finds, replaces the secret of, and removes a client by id or name', () => {
    const first = newClientSecret();
    const { next, client } = addClient(EMPTY_CLIENTS, fields, first.digest, 1);
    assert.equal(findClient(next, 'Grafana'), client);
    const second = newClientSecret();
    const replaced = replaceClientSecret(next, client.clientId, second.digest);
    assert.equal(isClientSecret(replaced.client, first.secret), false);
    assert.ok(isClientSecret(replaced.client, second.secret));
    assert.deepEqual(removeClient(replaced.next, 'Grafana').next.clients, []);
    assert.throws(() => findClient(next, 'nobody'), ClientNotFound);
  });

  it('refuses a stored client that is public with a secret, or confidential without one', () => {
    const { client } = addClient(EMPTY_CLIENTS, fields, newClientSecret().digest, 1);
    assert.equal(checkClientsDocument({ format: 1, clients: [{ ...client, public: true }] }, '').ok, false);
    const { secretDigest: _digest, ...withoutSecret } = client;
    assert.equal(checkClientsDocument({ format: 1, clients: [withoutSecret] }, '').ok, false);
    assert.equal(checkClientsDocument({ format: 1, clients: [client, client] }, '').ok, false);
    assert.equal(checkClientsDocument({ format: 1, clients: [{ ...client, extra: 1 }] }, '').ok, false);
    assert.equal(checkClientsDocument({ format: 2, clients: [] }, '').ok, false);
  });
});
