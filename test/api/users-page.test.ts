// The users page as served: the same prebuilt bytes for everyone, a strict CSP, relative API paths.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BUILT_SCRIPTS } from '../../src/pages/built-scripts.js';
import { startPopulatedServer } from '../helpers/api.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('GET {base}/gatehouse/users', () => {
  let server: TestServer;
  before(async () => {
    ({ server } = await startPopulatedServer());
  });
  after(() => server.close());

  it('serves the page with a CSP that allows only its own script and style by hash', async () => {
    const res = await server.request({ path: '/gatehouse/users', headers: { accept: 'text/html' } });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    const scripts = [...res.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] ?? '');
    for (const script of scripts) assert.ok(csp.includes(`'sha256-${createHash('sha256').update(script).digest('base64')}'`), 'each script is allowed by its hash');
    assert.ok(!/\son[a-z]+=/i.test(res.text), 'no inline event handler');
    const script = scripts.join('\n');
    assert.ok(script.includes('`../api/auth/${path}`'), 'the API is called on a relative path');
    assert.ok(!/["'`]\/api\//.test(script), 'no absolute API path');
  });

  it('runs the invitations\' section script, then the page\'s, each built from a browser/ entry and allowed by its build-time hash', async () => {
    const res = await server.request({ path: '/gatehouse/users', headers: { accept: 'text/html' } });
    const built = [BUILT_SCRIPTS['invitations/users-section'], BUILT_SCRIPTS['pages/users']];
    assert.deepEqual([...res.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]), built.map((script) => script.code));
    assert.match(String(res.headers['content-security-policy']), new RegExp(`; script-src ${built.map((script) => `'${script.hash.replace(/[+/]/g, '\\$&')}'`).join(' ')}; `));
  });

  it('is the same for a signed-out visitor: the data comes from the API, which decides', async () => {
    const signedOut = await server.request({ path: '/gatehouse/users' });
    assert.equal(signedOut.status, 200);
    assert.equal((await server.request({ method: 'HEAD', path: '/gatehouse/users' })).status, 200);
  });

  it('is not served with authMethod "none" (there are no /users routes there)', async () => {
    const none = await startTestServer({ GATEHOUSE_AUTH: 'none' });
    try {
      assert.equal((await none.request({ path: '/gatehouse/users' })).status, 404);
    } finally {
      await none.close();
    }
  });
});
