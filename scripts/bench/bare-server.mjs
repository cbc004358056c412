#!/usr/bin/env node
// The benchmark's headline reference: what anyone would write first with node:http. One fixed
// 75-byte JSON body, made once with JSON.stringify and sent as that string, only content-type
// and content-length, node's defaults for everything else (so node adds Date, Connection and
// Keep-Alive itself). Prints {"port":N,"bytes":75} once listening.
//
// A string, not a Buffer: node sends a string body in one chunk with the header block and a
// Buffer as a second chunk of a writev, about 5% more CPU per request (see src/http/respond.ts).
//
//   node scripts/bench/bare-server.mjs
import http from 'node:http';

const body = JSON.stringify({ ok: true, username: 'admin', level: 10, note: 'a bare node:http answer!' });
const bytes = Buffer.byteLength(body);

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port, bytes })}\n`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
