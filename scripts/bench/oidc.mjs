// The benchmark's OpenID Connect part (scripts/bench.mjs): a confidential client per algorithm
// registered on a running service, codes minted through authorize for the token rows (a code is
// good once, so each measured segment gets fresh ones, written one request body per line), an access
// token for the userinfo row, and the signing cost of one id_token measured alone. node: modules only.
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const BENCH_ISSUER = 'https://auth.bench.invalid';
const REDIRECT = 'https://app.bench.invalid/cb';

/** GET or POST over a keep-alive agent; resolves { status, headers, body }. */
function call(agent, url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(url, { method, agent, headers: payload === undefined ? headers : { 'content-length': payload.length, ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Registers an RS256 and an ES256 client as the service's administrator (its session cookie),
 * checks one whole sign-in with each, and returns what the rows need.
 */
export async function setUpOidc(service) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const clients = {};
  for (const alg of ['RS256', 'ES256']) {
    const made = await call(agent, `${service.url}/api/auth/clients`, {
      method: 'POST', headers: { ...service.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench ${alg}`, redirectUris: [REDIRECT], alg }),
    });
    if (made.status !== 200) throw new Error(`registering the ${alg} client: ${made.status} ${made.body}`);
    const { clientId, clientSecret } = JSON.parse(made.body);
    clients[alg] = { clientId, authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };
  }
  const oidc = {
    agent,
    clients,
    tokenUrl: `${service.url}/oidc/token`,
    userinfoUrl: `${service.url}/oidc/userinfo`,
    /** `count` fresh codes of `alg`'s client, as token request bodies. */
    async mintBodies(alg, count) {
      const client = clients[alg];
      const authorize = `${service.url}/oidc/authorize?response_type=code&scope=openid+profile&client_id=${client.clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}`;
      const bodies = [];
      const lane = async () => {
        while (bodies.length < count) {
          const res = await call(agent, authorize, { headers: service.cookie });
          const code = res.status === 303 ? new URL(res.headers.location).searchParams.get('code') : null;
          if (code === null) throw new Error(`authorize answered ${res.status} ${res.body.slice(0, 200)}`);
          bodies.push(`grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT)}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, lane));
      return bodies.slice(0, count);
    },
    /** As mintBodies, written one per line to `file` (what the load generators read); returns `file`. */
    async mintBodiesFile(alg, count, file) {
      writeFileSync(file, `${(await oidc.mintBodies(alg, count)).join('\n')}\n`, { mode: 0o600 });
      return file;
    },
    /** The token request's fixed headers for `alg`'s client. */
    tokenHeaders: (alg) => ({ 'content-type': 'application/x-www-form-urlencoded', Authorization: clients[alg].authorization }),
  };
  for (const alg of ['RS256', 'ES256']) {
    const [body] = await oidc.mintBodies(alg, 1);
    const res = await call(agent, oidc.tokenUrl, { method: 'POST', headers: oidc.tokenHeaders(alg), body });
    if (res.status !== 200) throw new Error(`the ${alg} code exchange answered ${res.status} ${res.body}`);
    const header = JSON.parse(Buffer.from(JSON.parse(res.body).id_token.split('.')[0], 'base64url').toString());
    if (header.alg !== alg) throw new Error(`the ${alg} client's id_token is ${header.alg}`);
    if (alg === 'RS256') oidc.accessToken = JSON.parse(res.body).access_token;
  }
  const info = await call(agent, oidc.userinfoUrl, { headers: { Authorization: `Bearer ${oidc.accessToken}` } });
  if (info.status !== 200) throw new Error(`userinfo answered ${info.status} ${info.body}`);
  return oidc;
}

/**
 * The `--role sign` child: the CPU time of signing (and verifying) one id_token with the service's
 * own code (dist/oidc/jws.js) and a fresh key of each algorithm, alone on its CPU. Prints BENCH_RESULT.
 */
export async function runSignCost(distDir, count) {
  const { signingKeyFromJwk } = await import(pathToFileURL(join(distDir, 'oidc', 'jwk.js')).href);
  const { signJwt, inspectJws } = await import(pathToFileURL(join(distDir, 'oidc', 'jws.js')).href);
  const claims = {
    iss: BENCH_ISSUER, sub: 'AAAAAAAAAAAAAAAAAAAAAA', preferred_username: 'admin', aud: 'a'.repeat(32), azp: 'a'.repeat(32),
    exp: 2_000_000_000, iat: 1_999_996_400, auth_time: 1_999_996_400, nonce: 'n'.repeat(22), amr: ['pwd'],
  };
  const results = {};
  for (const [alg, type, options] of [['RS256', 'rsa', { modulusLength: 2048 }], ['ES256', 'ec', { namedCurve: 'P-256' }]]) {
    const key = signingKeyFromJwk(generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }));
    const measure = (work) => {
      for (let i = 0; i < Math.min(200, count); i++) work();
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < count; i++) work();
      const used = process.cpuUsage(cpu);
      return { cpuMicros: (used.user + used.system) / count, wallMicros: ((performance.now() - started) * 1000) / count };
    };
    let token = '';
    const sign = measure(() => (token = signJwt(key, claims)));
    const verify = measure(() => {
      if (!inspectJws(token, () => key).ok) throw new Error('a token we signed does not verify');
    });
    results[alg] = { sign, verify, bytes: token.length };
  }
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ count, results })}\n`);
}
