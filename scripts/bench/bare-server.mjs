#!/usr/bin/env node
// The benchmark's headline reference: what anyone would write first with node:http. One fixed
// 75-byte JSON body, only content-type and content-length, node's defaults for everything else
// (so node adds Date, Connection and Keep-Alive itself). Prints {"port":N,"bytes":75} once listening.
//
//   node scripts/bench/bare-server.mjs
import http from 'node:http';

const BARE_BODY = Buffer.from(JSON.stringify({ ok: true, username: 'admin', level: 10, note: 'a bare node:http answer!' }));

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': BARE_BODY.length });
  res.end(BARE_BODY);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, bytes: BARE_BODY.length })}\n`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
