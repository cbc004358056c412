import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CborInvalid, decodeCbor, decodeCborPrefix, WEBAUTHN_CBOR_LIMITS } from '../../src/passkeys/cbor.js';
import { encodeCbor, SoftAuthenticator, type CborInput } from '../helpers/soft-authenticator.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');

function assertRefused(bytes: Uint8Array, reason: string): void {
  assert.throws(
    () => decodeCbor(bytes),
    (error: unknown) => error instanceof CborInvalid && error.reason === reason,
    `expected CborInvalid "${reason}" for ${Buffer.from(bytes).toString('hex')}`,
  );
}

describe('CBOR decoder', () => {
  it('decodes the RFC 8949 appendix A examples it supports', () => {
    const table: Array<[string, unknown]> = [
      ['00', 0],
      ['17', 23],
      ['1818', 24],
      ['1903e8', 1000],
      ['1a000f4240', 1000000],
      ['1b000000e8d4a51000', 1000000000000],
      ['20', -1],
      ['3863', -100],
      ['3903e7', -1000],
      ['f4', false],
      ['f5', true],
      ['f6', null],
      ['40', Buffer.alloc(0)],
      ['4401020304', Buffer.from([1, 2, 3, 4])],
      ['60', ''],
      ['6161', 'a'],
      ['62c3bc', '\u00fc'],
      ['80', []],
      ['83010203', [1, 2, 3]],
      ['8301820203820405', [1, [2, 3], [4, 5]]],
      ['a0', new Map()],
      ['a201020304', new Map([[1, 2], [3, 4]])],
      ['a26161016162820203', new Map<string, unknown>([['a', 1], ['b', [2, 3]]])],
    ];
    for (const [input, expected] of table) assert.deepEqual(decodeCbor(hex(input)), expected, input);
  });

  it('decodes a COSE key written by the test encoder back to the same map', () => {
    const key = new SoftAuthenticator({ algorithm: 'ES256' }).coseKey();
    const decoded = decodeCbor(key);
    assert.ok(decoded instanceof Map);
    assert.equal(decoded.get(1), 2);
    assert.equal(decoded.get(3), -7);
    assert.equal(encodeCbor(decoded).toString('hex'), key.toString('hex'));
  });

  it('says where an item ends, for a key followed by more bytes', () => {
    const bytes = Buffer.concat([Buffer.from([9, 9]), hex('a201020304'), hex('ff')]);
    const { value, end } = decodeCborPrefix(bytes, 2);
    assert.deepEqual(value, new Map([[1, 2], [3, 4]]));
    assert.equal(end, 7);
  });

  it('refuses each form WebAuthn does not need, with its reason', () => {
    const table: Array<[string, string]> = [
      ['', 'truncated'],
      ['18', 'truncated'],
      ['19 01', 'truncated'],
      ['43 0102', 'truncated'],
      ['82 01', 'truncated'],
      ['a1 01', 'truncated'],
      ['01 02', 'bytes after the item'],
      ['1b 0020000000000000', 'integer too large'],
      ['3b ffffffffffffffff', 'integer too large'],
      ['5f 41 01 ff', 'indefinite length'],
      ['7f ff', 'indefinite length'],
      ['9f ff', 'indefinite length'],
      ['bf ff', 'indefinite length'],
      ['1c', 'reserved additional information'],
      ['18 05', 'length not in its shortest form'],
      ['19 0010', 'length not in its shortest form'],
      ['1a 0000ffff', 'length not in its shortest form'],
      ['1b 00000000ffffffff', 'length not in its shortest form'],
      ['c2 41 01', 'tag'],
      ['f7', 'simple value'],
      ['f8 ff', 'simple value'],
      ['f9 3c00', 'floating-point number'],
      ['fa 47c35000', 'floating-point number'],
      ['fb 3ff199999999999a', 'floating-point number'],
      ['ff', 'simple value'],
      ['62 c328', 'text string not UTF-8'],
      ['a1 40 01', 'map key neither integer nor text'],
      ['a1 80 01', 'map key neither integer nor text'],
      ['a1 f6 01', 'map key neither integer nor text'],
      ['a2 01 02 01 03', 'repeated map key'],
      ['a2 6161 01 6161 02', 'repeated map key'],
      ['81 81 81 81 81 01', 'nested too deeply'],
      ['98 21' + '00'.repeat(33), 'too many entries'],
      ['5b 0000000100000000', 'truncated'],
      ['7a 00010000', 'text string too long'],
    ];
    for (const [input, reason] of table) assertRefused(hex(input), reason);
  });

  it('refuses more items than the limit, even when each container is small', () => {
    // 16 arrays of 16 zeros: 273 items.
    const inner = Buffer.concat([hex('90'), Buffer.alloc(16)]);
    assertRefused(Buffer.concat([hex('90'), ...Array<Buffer>(16).fill(inner)]), 'too many items');
  });

  it('refuses text longer than the limit and inputs larger than the byte cap', () => {
    assertRefused(encodeCbor('x'.repeat(WEBAUTHN_CBOR_LIMITS.maxTextBytes + 1)), 'text string too long');
    assert.equal(decodeCbor(encodeCbor('x'.repeat(WEBAUTHN_CBOR_LIMITS.maxTextBytes))), 'x'.repeat(WEBAUTHN_CBOR_LIMITS.maxTextBytes));
    assertRefused(encodeCbor(Buffer.alloc(WEBAUTHN_CBOR_LIMITS.maxBytes)), 'too many bytes');
  });

  it('refuses an offset outside the input', () => {
    assert.throws(() => decodeCborPrefix(hex('00'), 2), CborInvalid);
    assert.throws(() => decodeCborPrefix(hex('00'), -1), CborInvalid);
  });
});

/** A small deterministic generator (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('CBOR decoder under fuzzing', () => {
  const seeds = [
    new SoftAuthenticator({ algorithm: 'ES256' }).coseKey(),
    new SoftAuthenticator({ algorithm: 'EdDSA' }).coseKey(),
    new SoftAuthenticator({ algorithm: 'RS256' }).coseKey(),
    encodeCbor(
      new Map<string, CborInput>([
        ['fmt', 'packed'],
        ['attStmt', new Map<string, CborInput>([['alg', -7], ['sig', Buffer.alloc(70, 1)], ['x5c', [Buffer.alloc(300, 2)]]])],
        ['authData', Buffer.alloc(164, 3)],
      ]),
    ),
  ];

  /** Decodes and asserts the outcome is a value or a CborInvalid, nothing else. */
  function decodeOrRefuse(bytes: Uint8Array, label: string): void {
    try {
      decodeCbor(bytes);
    } catch (error) {
      if (!(error instanceof CborInvalid)) assert.fail(`${label}: ${Buffer.from(bytes).toString('hex').slice(0, 200)} threw ${String(error)}`);
    }
  }

  it('ends every random input in a value or a CborInvalid, quickly', () => {
    const next = random(0x5eed);
    const started = process.hrtime.bigint();
    for (let i = 0; i < 20_000; i++) {
      const length = Math.floor(next() * 64);
      const bytes = Buffer.alloc(length);
      for (let j = 0; j < length; j++) bytes[j] = Math.floor(next() * 256);
      decodeOrRefuse(bytes, `random case ${i}`);
    }
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(elapsedMs < 5_000, `20,000 random inputs took ${elapsedMs} ms`);
  });

  it('ends every mutation of real WebAuthn CBOR in a value or a CborInvalid, quickly', () => {
    const next = random(0xc0ffee);
    const started = process.hrtime.bigint();
    let decoded = 0;
    for (let i = 0; i < 20_000; i++) {
      const seed = seeds[i % seeds.length] ?? Buffer.alloc(0);
      const bytes = Buffer.from(seed);
      const mutations = 1 + Math.floor(next() * 4);
      let mutated: Buffer = bytes;
      for (let m = 0; m < mutations; m++) {
        const at = Math.floor(next() * Math.max(1, mutated.length));
        const choice = next();
        if (choice < 0.4) mutated[at] = Math.floor(next() * 256);
        else if (choice < 0.6) mutated[at] = (mutated[at] ?? 0) ^ (1 << Math.floor(next() * 8));
        else if (choice < 0.75) mutated = mutated.subarray(0, at);
        else if (choice < 0.9) mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([Math.floor(next() * 256)]), mutated.subarray(at)]);
        // Lengths near the edges: the first byte of a head set to a long form.
        else mutated[at] = [0x1b, 0x5b, 0x7b, 0x9b, 0xbb, 0x9f, 0xbf, 0xff][Math.floor(next() * 8)] ?? 0;
      }
      try {
        decodeCbor(mutated);
        decoded++;
      } catch (error) {
        if (!(error instanceof CborInvalid)) assert.fail(`mutation ${i}: ${mutated.toString('hex').slice(0, 200)} threw ${String(error)}`);
      }
    }
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(elapsedMs < 5_000, `20,000 mutations took ${elapsedMs} ms`);
    // The mutations must exercise the decoder past the first byte, not all fail at once.
    assert.ok(decoded > 100, `only ${decoded} mutations decoded`);
  });

  it('refuses deep nesting and huge declared lengths without using their memory', () => {
    for (const bytes of [Buffer.alloc(100_000, 0x81), Buffer.concat([hex('5b 7fffffffffffffff')]), Buffer.concat([hex('9b 0000000100000000')]), Buffer.concat([hex('bb 0000000100000000')])]) {
      decodeOrRefuse(bytes, 'edge');
      assert.throws(() => decodeCbor(bytes), CborInvalid);
    }
  });
});
