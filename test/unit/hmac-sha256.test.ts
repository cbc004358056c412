import assert from 'node:assert/strict';
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { createHmacSha256 } from '../../src/auth/hmac-sha256.js';

const hexOf = (base64url: string): string => Buffer.from(base64url, 'base64url').toString('hex');
const oracle = (key: Buffer, message: string): string => createHmac('sha256', key).update(message).digest('base64url');

describe('createHmacSha256', () => {
  // RFC 4231 section 4: the test cases whose data is text (2, 6, 7) or ASCII (1).
  const vectors = [
    { name: 'case 1 (20-byte key)', key: Buffer.alloc(20, 0x0b), data: 'Hi There', mac: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7' },
    { name: 'case 2 (short key)', key: Buffer.from('Jefe'), data: 'what do ya want for nothing?', mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' },
    {
      name: 'case 6 (key longer than a block)',
      key: Buffer.alloc(131, 0xaa),
      data: 'Test Using Larger Than Block-Size Key - Hash Key First',
      mac: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    },
    {
      name: 'case 7 (key and data longer than a block)',
      key: Buffer.alloc(131, 0xaa),
      data: 'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
      mac: '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    },
  ];
  for (const { name, key, data, mac } of vectors) {
    it(`gives the RFC 4231 value for ${name}`, () => {
      assert.equal(hexOf(createHmacSha256(key, 4096)(data)), mac);
    });
    it(`gives the RFC 4231 value for ${name} through the path for messages over the size it was made for`, () => {
      assert.equal(hexOf(createHmacSha256(key, 4)(data)), mac);
    });
  }

  it('agrees with node:crypto createHmac on random keys and messages, in any order of lengths', () => {
    const alphabet = ['a', 'Z', '0', '.', '-', '_', ' ', 'é', 'Ł', '€', '😀', '\u0000', '\uD800'];
    for (let round = 0; round < 40; round++) {
      // Keys below, at and above the 64-byte block; messages up to twice the prepared size.
      const key = randomBytes([1, 32, 63, 64, 65, 131][round % 6] ?? 32);
      const mac = createHmacSha256(key, 300);
      for (let i = 0; i < 25; i++) {
        const length = randomInt(0, 600);
        let message = '';
        while (message.length < length) message += alphabet[randomInt(alphabet.length)] ?? 'a';
        assert.equal(mac(message), oracle(key, message), `key ${key.length} bytes, message ${JSON.stringify(message.slice(0, 40))}… (${message.length} chars)`);
      }
    }
  });

  it('is not changed by a previous, longer message (the scratch space is reused)', () => {
    const key = randomBytes(32);
    const mac = createHmacSha256(key, 100);
    const long = 'x'.repeat(100);
    mac(long);
    assert.equal(mac('x'), oracle(key, 'x'));
    assert.equal(mac(''), oracle(key, ''));
  });

  it('copies the key: changing the buffer afterwards changes nothing', () => {
    const key = randomBytes(32);
    const original = Buffer.from(key);
    const mac = createHmacSha256(key, 100);
    key.fill(0);
    assert.equal(mac('message'), oracle(original, 'message'));
  });

  it('refuses an empty key and a bad prepared size', () => {
    assert.throws(() => createHmacSha256(Buffer.alloc(0), 10), TypeError);
    assert.throws(() => createHmacSha256(randomBytes(32), -1), TypeError);
    assert.throws(() => createHmacSha256(randomBytes(32), 1.5), TypeError);
  });
});
