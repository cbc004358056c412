// What the A/B scripts (cpu-ab.mjs, instructions-ab.mjs) share to start and ask a service: a free
// port, one request, the session token a sign-in sets, and the Flood client settings an account
// is registered with.
import http from 'node:http';
import net from 'node:net';

export const CLIENT = { client: 'rTorrent', type: 'socket', version: 1, socket: '/s' };

export function freePort() {
  return new Promise((ok) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** One request; `agent` false (the default) for a connection of its own. Resolves with status, headers and the body's text. */
export function request(url, { method = 'GET', headers = {}, body, agent = false } = {}) {
  return new Promise((ok, fail) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(url, {
      method, agent,
      headers: payload === undefined ? headers : { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', fail);
    req.end(payload);
  });
}

/** The session token in an answer's first Set-Cookie, or undefined. */
export const tokenOf = (res) => /^jwt=([^;]+)/.exec([res.headers['set-cookie'] ?? []].flat()[0] ?? '')?.[1];
