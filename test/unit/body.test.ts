import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { announcesBody, isDeclaredTooLarge, MAX_JSON_DEPTH, parseJson, receiveBody } from '../../src/http/body.js';
import { BodyTooLarge, InvalidJson } from '../../src/errors.js';

/** A request stream with `headers` that yields `chunks`. */
function fakeRequest(headers: Record<string, string>, chunks: readonly Buffer[] = []): IncomingMessage & { consumed: () => number } {
  let consumed = 0;
  const stream = Readable.from(
    (function* () {
      for (const chunk of chunks) {
        consumed += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
  return Object.assign(stream, { headers, consumed: () => consumed }) as unknown as IncomingMessage & { consumed: () => number };
}

function assertInvalid(text: string): void {
  assert.throws(
    () => parseJson(text),
    (error: unknown) => {
      assert.ok(error instanceof InvalidJson, `expected InvalidJson, got ${String(error)}`);
      assert.equal(error.code, 'INVALID_JSON');
      return true;
    },
  );
}

const nestedArrays = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

describe('parseJson', () => {
  const refused: ReadonlyArray<[string, string]> = [
    ['text that is not JSON', 'username=alice'],
    ['the empty string', ''],
    ['a truncated object', '{"username":"alice"'],
    ['a trailing comma', '{"a":1,}'],
    ['single-quoted strings', "{'a':1}"],
    ['a top-level __proto__ key', '{"__proto__":{"isAdmin":true}}'],
    ['a __proto__ key with a primitive value', '{"__proto__":1}'],
    ['a __proto__ key after other keys', '{"username":"a","__proto__":{}}'],
    ['a __proto__ key nested in an object', '{"client":{"__proto__":{"x":1}}}'],
    ['a __proto__ key nested in an array', '{"list":[1,{"__proto__":{}}]}'],
    ['a __proto__ key deep down', '{"a":{"b":{"c":[{"d":{"__proto__":null}}]}}}'],
    ['a __proto__ key spelled with an escape', '{"\\u005f_proto__":{}}'],
    ['a top-level constructor.prototype', '{"constructor":{"prototype":{"isAdmin":true}}}'],
    ['a constructor.prototype nested in an object', '{"client":{"constructor":{"prototype":{}}}}'],
    ['a constructor.prototype nested in an array', '[{"constructor":{"prototype":1}}]'],
    ['a constructor.prototype whose value is null', '{"constructor":{"prototype":null}}'],
    [`arrays nested ${MAX_JSON_DEPTH + 1} deep`, nestedArrays(MAX_JSON_DEPTH + 1)],
    [`objects nested ${MAX_JSON_DEPTH + 1} deep`, nestedObjects(MAX_JSON_DEPTH + 1)],
    ['arrays nested 10,000 deep', nestedArrays(10_000)],
  ];
  for (const [name, text] of refused) {
    it(`refuses ${name} with InvalidJson`, () => assertInvalid(text));
  }

  const accepted: ReadonlyArray<[string, string, unknown]> = [
    ['a plain object', '{"username":"alice","password":"pw"}', { username: 'alice', password: 'pw' }],
    ['a key named constructor with a string value', '{"constructor":"x"}', { constructor: 'x' }],
    ['a key named constructor holding an object without prototype', '{"constructor":{"name":"x"}}', { constructor: { name: 'x' } }],
    ['a top-level key named prototype', '{"prototype":{"a":1}}', { prototype: { a: 1 } }],
    ['the string "__proto__" as a value', '{"username":"__proto__"}', { username: '__proto__' }],
    ['a key that merely contains __proto__', '{"__proto__x":1,"x__proto__":2}', { __proto__x: 1, x__proto__: 2 }],
    [`arrays nested exactly ${MAX_JSON_DEPTH} deep`, nestedArrays(MAX_JSON_DEPTH), JSON.parse(nestedArrays(MAX_JSON_DEPTH))],
    [`objects nested exactly ${MAX_JSON_DEPTH} deep`, nestedObjects(MAX_JSON_DEPTH), JSON.parse(nestedObjects(MAX_JSON_DEPTH))],
    ['a JSON string', '"text"', 'text'],
    ['a JSON number', '42', 42],
    ['JSON null', 'null', null],
    ['an empty array', '[]', []],
  ];
  for (const [name, text, expected] of accepted) {
    it(`accepts ${name}`, () => assert.deepEqual(parseJson(text), expected));
  }

  it('allows many siblings at the same shallow depth', () => {
    const wide = JSON.stringify({ list: Array.from({ length: 1000 }, (_, i) => ({ i })) });
    assert.deepEqual(parseJson(wide), JSON.parse(wide));
  });
});

describe('announcesBody', () => {
  const cases: ReadonlyArray<[string, Record<string, string>, boolean]> = [
    ['no length and no transfer coding', {}, false],
    ['Content-Length: 0', { 'content-length': '0' }, false],
    ['Content-Length: 1', { 'content-length': '1' }, true],
    ['Transfer-Encoding: chunked', { 'transfer-encoding': 'chunked' }, true],
  ];
  for (const [name, headers, expected] of cases) {
    it(`answers ${String(expected)} for ${name}`, () => assert.equal(announcesBody(fakeRequest(headers)), expected));
  }
});

describe('isDeclaredTooLarge', () => {
  it('compares the declared length with the cap, and a chunked body declares nothing', () => {
    assert.equal(isDeclaredTooLarge(fakeRequest({ 'content-length': '1024' }), 1024), false);
    assert.equal(isDeclaredTooLarge(fakeRequest({ 'content-length': '1025' }), 1024), true);
    assert.equal(isDeclaredTooLarge(fakeRequest({ 'content-length': '10000000000' }), 1024), true);
    assert.equal(isDeclaredTooLarge(fakeRequest({ 'transfer-encoding': 'chunked' }), 1024), false);
  });
});

describe('receiveBody', () => {
  const kib = Buffer.alloc(1024, 0x61);

  it('reads a body within the cap to its end', async () => {
    const req = fakeRequest({ 'transfer-encoding': 'chunked' }, [kib, kib]);
    await receiveBody(req, 2048);
    assert.equal(req.consumed(), 2048);
  });

  it('refuses a declared length over the cap without reading', async () => {
    const req = fakeRequest({ 'content-length': '2049' }, [kib, kib, kib]);
    await assert.rejects(receiveBody(req, 2048), BodyTooLarge);
    assert.equal(req.consumed(), 0);
  });

  it('stops reading as soon as a chunked body crosses the cap', async () => {
    const chunks = Array.from({ length: 100 }, () => kib);
    const req = fakeRequest({ 'transfer-encoding': 'chunked' }, chunks);
    await assert.rejects(receiveBody(req, 2048), BodyTooLarge);
    // The stream may read ahead up to its 16 KiB high-water mark; never all 100 KiB.
    assert.ok(req.consumed() <= 20 * 1024, `${req.consumed()} bytes were read for a cap of 2048`);
  });
});
