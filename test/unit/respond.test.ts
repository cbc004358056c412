import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { prepareAnswer, sendJson, sendPrepared, sendRawJson } from '../../src/http/respond.js';

/** Answers one request with `answer` and returns the raw bytes the client received. */
async function rawAnswer(answer: (res: ServerResponse) => void): Promise<Buffer> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n'));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks)));
      socket.on('error', reject);
    });
  } finally {
    server.close();
  }
}

function split(raw: Buffer): { head: Buffer; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  return { head: raw.subarray(0, end), body: raw.subarray(end + 4) };
}

describe('sendJson, sendRawJson and sendPrepared', () => {
  const cases = [
    { name: 'an ASCII JSON string', send: (res: ServerResponse) => sendRawJson(res, 200, '{"username":"ann"}', { 'x-test': 'caf\u00e9' }), body: '{"username":"ann"}' },
    { name: 'a JSON string with characters beyond ASCII', send: (res: ServerResponse) => sendRawJson(res, 200, '{"username":"zo\u00eb \u{1f600}"}', { 'x-test': 'caf\u00e9' }), body: '{"username":"zo\u00eb \u{1f600}"}' },
    { name: 'a Buffer', send: (res: ServerResponse) => sendRawJson(res, 200, Buffer.from('{"username":"zo\u00eb"}'), { 'x-test': 'caf\u00e9' }), body: '{"username":"zo\u00eb"}' },
    { name: 'a prepared ASCII answer', send: (res: ServerResponse) => sendPrepared(res, prepareAnswer(200, '{"username":"ann"}', { 'x-test': 'caf\u00e9' })), body: '{"username":"ann"}' },
    { name: 'a prepared answer beyond ASCII', send: (res: ServerResponse) => sendPrepared(res, prepareAnswer(200, '{"username":"zo\u00eb \u{1f600}"}', { 'x-test': 'caf\u00e9' })), body: '{"username":"zo\u00eb \u{1f600}"}' },
    { name: 'a value through sendJson, beyond ASCII', send: (res: ServerResponse) => sendJson(res, 401, { message: 'na\u00efve' }, { 'x-test': 'caf\u00e9' }), body: '{"message":"na\u00efve"}' },
  ];
  for (const { name, send, body } of cases) {
    it(`sends ${name} as its UTF-8 bytes with a matching content-length, and header values byte for byte as latin1`, async () => {
      const { head, body: received } = split(await rawAnswer(send));
      assert.deepEqual(received, Buffer.from(body, 'utf8'));
      const text = head.toString('latin1');
      assert.match(text, new RegExp(`\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`));
      // U+00E9 in a header value is the one byte 0xe9 on the wire, whatever the body.
      assert.ok(head.includes(Buffer.from('x-test: caf\u00e9\r\n', 'latin1')), text);
      assert.match(text, /\r\ncache-control: no-store\r\n/);
      assert.match(text, /\r\nx-content-type-options: nosniff\r\n/);
      assert.match(text, /\r\ncontent-type: application\/json; charset=utf-8\r\n/);
    });
  }
});

describe('prepareAnswer', () => {
  it('keeps ASCII as a string and encodes anything else to UTF-8 once, with a content-length of its bytes', () => {
    const ascii = prepareAnswer(200, '{"a":1}');
    assert.equal(ascii.body, '{"a":1}');
    assert.equal(ascii.headers['content-length'], 7);
    const wide = prepareAnswer(200, '{"a":"\u00e9"}');
    assert.ok(Buffer.isBuffer(wide.body));
    assert.deepEqual(wide.body, Buffer.from('{"a":"\u00e9"}', 'utf8'));
    assert.equal(wide.headers['content-length'], 10);
  });

  it('keeps a large body (the list of thousands of users) as bytes, even when it is ASCII', () => {
    const json = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ username: `u${i}`, level: 5 })));
    assert.ok(json.length > 8 * 1024);
    const answer = prepareAnswer(200, json);
    assert.ok(Buffer.isBuffer(answer.body));
    assert.equal(answer.headers['content-length'], json.length);
    assert.equal(typeof prepareAnswer(200, json.slice(0, 8 * 1024)).body, 'string');
  });

  it('is frozen, headers included, and sends the same bytes every time', async () => {
    const answer = prepareAnswer(403, '{"code":"NOT_ADMINISTRATOR"}', { 'remote-level': 'USER' });
    assert.ok(Object.isFrozen(answer) && Object.isFrozen(answer.headers));
    const first = await rawAnswer((res) => sendPrepared(res, answer));
    const second = await rawAnswer((res) => sendPrepared(res, answer));
    const withoutDate = (raw: Buffer): string => raw.toString('latin1').replace(/\r\ndate: [^\r]*/i, '');
    assert.equal(withoutDate(second), withoutDate(first));
    assert.match(first.toString('latin1'), /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(first.toString('latin1'), /\r\nremote-level: USER\r\n/);
    assert.equal(split(first).body.toString(), '{"code":"NOT_ADMINISTRATOR"}');
  });
});
