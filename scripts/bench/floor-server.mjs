#!/usr/bin/env node
// One rung of the cost ladder that scripts/bench/cpu-ab.mjs climbs: a node:http server that answers
// verify's request with the service's own pieces (imported from a built dist/), up to a given
// rung and nothing else. Each rung adds one piece to the one before:
//
//   answer   verify's 200 as the build sends it: our four headers, our body bytes
//   request  + what every request pays before its route: path split, the jwt cookie read,
//              the client address, the clock read twice (the logged duration)
//   mac      + TokenCodec.inspect of the cookie: the HMAC-SHA256 (createHmac), the constant-time
//              compare, the cached claims, exp and iat
//   log      + the request log line (JSON, info), batched and written as the service does
//
// and one that is not on the ladder, for comparison only:
//   lookup   the request rung plus a Map lookup of the whole token in place of the MAC: what a
//            cache of verified tokens would cost. The service does not do this (every
//            verification checks the MAC).
//
// Prints {"port":N,"cookie":"jwt=..."} on stdout once listening; log lines go to /dev/null.
//
//   node scripts/bench/floor-server.mjs DIST RUNG
import { openSync, writeSync } from 'node:fs';
import http from 'node:http';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const RUNGS = ['answer', 'request', 'mac', 'log'];
const [distArg, rung] = process.argv.slice(2);
if (distArg === undefined || (!RUNGS.includes(rung) && rung !== 'lookup')) {
  process.stderr.write(`usage: floor-server.mjs DIST ${[...RUNGS, 'lookup'].join('|')}\n`);
  process.exit(2);
}
const dist = resolve(distArg);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const respond = await load('http/respond.js');
const { readCookie } = await load('http/cookies.js');
const { createTokenCodec } = await load('auth/jwt.js');
const { createLogger } = await load('log/logger.js');

const has = (step) => rung !== 'lookup' && RUNGS.indexOf(rung) >= RUNGS.indexOf(step);
const codec = createTokenCodec(Buffer.alloc(40, 'x'));
const nowSeconds = Math.floor(Date.now() / 1000);
// A session token shaped as the service issues them (same claims, same length).
const token = codec.sign({ username: 'admin', iat: nowSeconds, exp: nowSeconds + 7 * 86_400, sid: 'AAAAAAAAAAAAAAAAAAAAAA', jti: 'BBBBBBBBBBBBBBBBBBBBBB' });
const json = JSON.stringify({ initialUser: false, username: 'admin', level: 10, configs: { authMethod: 'default', pollInterval: 2000 } });
// Verify's answer as the build sends it (builds before prepareAnswer sent a prepared body through sendRawJson).
const send =
  respond.prepareAnswer === undefined
    ? ((body) => (res, status) => respond.sendRawJson(res, status, body))(respond.preparedJson(json))
    : ((answers) => (res, status) => respond.sendPrepared(res, answers[status]))({ 200: respond.prepareAnswer(200, json), 401: respond.prepareAnswer(401, json) });
const devNull = openSync('/dev/null', 'w');
const logger = createLogger({ level: 'info', format: 'json', stdout: { write: (text) => writeSync(devNull, text) }, stderr: process.stderr });
const verified = new Map([[token, true]]);

const server = http.createServer((req, res) => {
  if (!has('request') && rung !== 'lookup') {
    send(res, 200);
    return;
  }
  const startedAt = performance.now();
  const address = req.socket.remoteAddress ?? '';
  const url = req.url ?? '/';
  const queryStart = url.indexOf('?');
  const path = queryStart < 0 ? url : url.slice(0, queryStart);
  const cookie = readCookie(req.headers.cookie, 'jwt');
  let status = 200;
  if (rung === 'lookup') {
    if (cookie === undefined || verified.get(cookie) !== true) status = 401;
  } else if (has('mac')) {
    if (cookie === undefined || !codec.inspect(cookie, Math.floor(Date.now() / 1000)).ok) status = 401;
  }
  send(res, status);
  if (has('log')) logger.request(req.method ?? '', path, status, Math.round((performance.now() - startedAt) * 100) / 100, address);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, cookie: `jwt=${token}` })}\n`));
process.on('SIGTERM', () => {
  logger.flush();
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
