// The authorize and token parameters, each bounded and validated into a typed value: tables of what
// is accepted and of every refusal with the RFC 6749 error it gets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OAuthRefused, type OAuthErrorCode } from '../../src/errors.js';
import { readAuthorizeRequest, readRedirectTarget } from '../../src/oidc/authorize-request.js';
import { addClient, EMPTY_CLIENTS, newClientSecret, type StoredClient } from '../../src/oidc/clients.js';
import { parseForm, type FormParameters } from '../../src/oidc/form.js';
import { readClientCredentials, readTokenRequest } from '../../src/oidc/token-request.js';

const REDIRECT = 'https://app.example.org/cb?from=gatehouse';
const confidential = addClient(EMPTY_CLIENTS, { name: 'app', redirectUris: [REDIRECT] }, newClientSecret().digest, 1).client;
const publicClient = addClient(EMPTY_CLIENTS, { name: 'phone', redirectUris: ['app.example:/cb'], public: true }, undefined, 1).client;
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function form(values: Record<string, string>): FormParameters {
  const result = parseForm(new URLSearchParams(values).toString());
  assert.ok(result.ok);
  return result.parameters;
}
const find = (id: string): StoredClient | undefined => [confidential, publicClient].find((client) => client.clientId === id);

function refusedWith(action: () => unknown, error: OAuthErrorCode): void {
  assert.throws(action, (thrown: unknown) => {
    assert.ok(thrown instanceof OAuthRefused, String(thrown));
    assert.equal(thrown.error, error, thrown.message);
    return true;
  });
}

describe('the client and redirect URI of an authorization request', () => {
  it('finds the client and the redirect URI registered for it, and keeps a good state', () => {
    const target = readRedirectTarget(form({ client_id: confidential.clientId, redirect_uri: REDIRECT, state: 'x y~' }), find);
    assert.ok(target.ok);
    assert.equal(target.client, confidential);
    assert.equal(target.state, 'x y~');
  });

  const pages: ReadonlyArray<readonly [string, Record<string, string>]> = [
    ['no client_id', { redirect_uri: REDIRECT }],
    ['an unknown client_id', { client_id: 'f'.repeat(32), redirect_uri: REDIRECT }],
    ['a client_id with a control character', { client_id: 'a\u0001', redirect_uri: REDIRECT }],
    ['no redirect_uri', { client_id: confidential.clientId }],
    ['a redirect_uri registered for another client', { client_id: confidential.clientId, redirect_uri: 'app.example:/cb' }],
    ['a redirect_uri that differs by a trailing slash', { client_id: confidential.clientId, redirect_uri: `${REDIRECT}/` }],
    ['a redirect_uri that differs in case', { client_id: confidential.clientId, redirect_uri: REDIRECT.replace('app', 'APP') }],
    ['a redirect_uri with more query', { client_id: confidential.clientId, redirect_uri: `${REDIRECT}&x=1` }],
  ];
  for (const [name, values] of pages) {
    it(`gives a page, never a redirect, for ${name}`, () => assert.equal(readRedirectTarget(form(values), find).ok, false));
  }

  it('drops a malformed state rather than echo it', () => {
    const target = readRedirectTarget(form({ client_id: confidential.clientId, redirect_uri: REDIRECT, state: 'a\nb' }), find);
    assert.ok(target.ok);
    assert.equal(target.state, undefined);
  });
});

describe('the rest of an authorization request', () => {
  const good = { response_type: 'code', scope: 'openid profile', client_id: confidential.clientId, redirect_uri: REDIRECT };

  it('reads scopes (known ones, in our order), nonce, PKCE, prompt and max_age', () => {
    const request = readAuthorizeRequest(form({
      ...good, scope: 'groups custom openid email offline_access', nonce: 'n-0S6_WzA2Mj', code_challenge: CHALLENGE,
      code_challenge_method: 'S256', prompt: 'login consent', max_age: '300',
    }), confidential);
    assert.deepEqual(request, {
      scopes: ['openid', 'email', 'groups', 'offline_access'], nonce: 'n-0S6_WzA2Mj', codeChallenge: CHALLENGE, prompt: 'login', maxAgeSeconds: 300,
    });
  });

  it('lets a confidential client go without PKCE, and a public one with it', () => {
    assert.equal(readAuthorizeRequest(form(good), confidential).codeChallenge, undefined);
    const request = readAuthorizeRequest(form({ ...good, code_challenge: CHALLENGE, code_challenge_method: 'S256' }), publicClient);
    assert.equal(request.codeChallenge, CHALLENGE);
  });

  const refusals: ReadonlyArray<readonly [string, Record<string, string>, OAuthErrorCode, StoredClient?]> = [
    ['no response_type', { ...good, response_type: '' }, 'invalid_request'],
    ['the implicit flow (token)', { ...good, response_type: 'token' }, 'unsupported_response_type'],
    ['the implicit flow (id_token)', { ...good, response_type: 'id_token' }, 'unsupported_response_type'],
    ['the hybrid flow', { ...good, response_type: 'code id_token' }, 'unsupported_response_type'],
    ['no openid scope', { ...good, scope: 'profile email' }, 'invalid_scope'],
    ['no scope', { ...good, scope: '' }, 'invalid_scope'],
    ['a scope token with a quote', { ...good, scope: 'openid "x"' }, 'invalid_request'],
    ['a public client without PKCE', good, 'invalid_request', publicClient],
    ['PKCE plain', { ...good, code_challenge: CHALLENGE, code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without a method (plain)', { ...good, code_challenge: CHALLENGE }, 'invalid_request'],
    ['a method without a challenge', { ...good, code_challenge_method: 'S256' }, 'invalid_request'],
    ['a challenge that is not S256-shaped', { ...good, code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    ['prompt=none with login', { ...good, prompt: 'none login' }, 'invalid_request'],
    ['an unknown prompt', { ...good, prompt: 'create' }, 'invalid_request'],
    ['a negative max_age', { ...good, max_age: '-1' }, 'invalid_request'],
    ['a huge max_age', { ...good, max_age: '99999999999' }, 'invalid_request'],
    ['response_mode form_post', { ...good, response_mode: 'form_post' }, 'invalid_request'],
    ['response_mode fragment', { ...good, response_mode: 'fragment' }, 'invalid_request'],
    ['a request object', { ...good, request: 'eyJ.x.y' }, 'request_not_supported'],
    ['a request_uri', { ...good, request_uri: 'https://x' }, 'request_uri_not_supported'],
    ['registration', { ...good, registration: '{}' }, 'registration_not_supported'],
    ['a nonce with a control character', { ...good, nonce: 'a\u0000' }, 'invalid_request'],
    ['a nonce of 513 characters', { ...good, nonce: 'n'.repeat(513) }, 'invalid_request'],
    ['a state of 2049 characters', { ...good, state: 's'.repeat(2049) }, 'invalid_request'],
  ];
  for (const [name, values, error, client] of refusals) {
    it(`refuses ${name} with ${error}`, () => refusedWith(() => readAuthorizeRequest(form(values), client ?? confidential), error));
  }
});

describe('the token request', () => {
  const code = 'c'.repeat(43);
  it('reads a code exchange and a refresh', () => {
    assert.deepEqual(readTokenRequest(form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) })), {
      grant: 'authorization_code', code, redirectUri: REDIRECT, codeVerifier: 'v'.repeat(43),
    });
    const refreshToken = `${'g'.repeat(22)}.${'r'.repeat(43)}`;
    assert.deepEqual(readTokenRequest(form({ grant_type: 'refresh_token', refresh_token: refreshToken, scope: 'openid' })), {
      grant: 'refresh_token', refreshToken, scopes: ['openid'],
    });
  });

  const refusals: ReadonlyArray<readonly [string, Record<string, string>, OAuthErrorCode]> = [
    ['no grant_type', { code }, 'invalid_request'],
    ['the password grant', { grant_type: 'password', username: 'a', password: 'b' }, 'unsupported_grant_type'],
    ['the client credentials grant', { grant_type: 'client_credentials' }, 'unsupported_grant_type'],
    ['the implicit grant', { grant_type: 'implicit' }, 'unsupported_grant_type'],
    ['no code', { grant_type: 'authorization_code', redirect_uri: REDIRECT }, 'invalid_request'],
    ['a code of the wrong length', { grant_type: 'authorization_code', code: 'c'.repeat(42), redirect_uri: REDIRECT }, 'invalid_request'],
    ['no redirect_uri', { grant_type: 'authorization_code', code }, 'invalid_request'],
    ['a short code_verifier', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'v'.repeat(42) }, 'invalid_request'],
    ['a long code_verifier', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'v'.repeat(129) }, 'invalid_request'],
    ['a code_verifier with a space', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: `${'v'.repeat(43)} ` }, 'invalid_request'],
    ['a malformed refresh token', { grant_type: 'refresh_token', refresh_token: 'x' }, 'invalid_request'],
  ];
  for (const [name, values, error] of refusals) {
    it(`refuses ${name} with ${error}`, () => refusedWith(() => readTokenRequest(form(values)), error));
  }
});

describe('client credentials', () => {
  const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

  it('reads client_secret_basic, form-decoding both parts, and client_secret_post', () => {
    assert.deepEqual(readClientCredentials(form({}), basic('my id', 's:e/c')), { clientId: 'my id', secret: 's:e/c', isBasic: true });
    assert.deepEqual(readClientCredentials(form({ client_id: 'a', client_secret: 'b' }), undefined), { clientId: 'a', secret: 'b', isBasic: false });
    assert.deepEqual(readClientCredentials(form({ client_id: 'a' }), undefined), { clientId: 'a', secret: undefined, isBasic: false });
    assert.deepEqual(readClientCredentials(form({ client_id: 'a', client_secret: '' }), undefined), { clientId: 'a', secret: undefined, isBasic: false });
  });

  const refusals: ReadonlyArray<readonly [string, Record<string, string>, string | undefined, OAuthErrorCode]> = [
    ['no client at all', {}, undefined, 'invalid_client'],
    ['two methods', { client_secret: 'b' }, basic('a', 'b'), 'invalid_request'],
    ['a client_id that differs from the header', { client_id: 'other' }, basic('a', 'b'), 'invalid_request'],
    ['a Bearer header', {}, 'Bearer abc', 'invalid_client'],
    ['Basic without a colon', {}, `Basic ${Buffer.from('ab').toString('base64')}`, 'invalid_client'],
    ['Basic with an empty id', {}, `Basic ${Buffer.from(':b').toString('base64')}`, 'invalid_client'],
    ['Basic that is not base64', {}, 'Basic ***', 'invalid_client'],
    ['Basic that is not UTF-8', {}, `Basic ${Buffer.from([0x61, 0x3a, 0xff]).toString('base64')}`, 'invalid_client'],
    ['Basic with a bad escape', {}, `Basic ${Buffer.from('a:%zz').toString('base64')}`, 'invalid_client'],
    ['an oversized Basic header', {}, `Basic ${'A'.repeat(4000)}`, 'invalid_client'],
    ['a client_id with a control character', { client_id: 'a\u0000' }, undefined, 'invalid_request'],
  ];
  for (const [name, values, header, error] of refusals) {
    it(`refuses ${name} with ${error}`, () => refusedWith(() => readClientCredentials(form(values), header), error));
  }
});
