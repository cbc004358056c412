import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { encodeQr, MAX_QR_BYTES, QrInputTooLong } from '../../src/totp/qr-encode.js';
import { renderQrSvg, svgOf } from '../../src/totp/qr-svg.js';

// The decoder test (zbarimg reads every mask, both levels, and the SVG as Chromium draws it) is
// the qr suite: npm run test:qr. These need no outside program.

/** The dark modules an SVG of ours draws, from its path's `M x y h n v1 h-n z` runs, quiet zone removed. */
function modulesOfSvg(svg: string): Set<string> {
  const path = /<path d="([^"]*)"/.exec(svg)?.[1] ?? '';
  const dark = new Set<string>();
  for (const match of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    const [x, y, run, back] = [match[1], match[2], match[3], match[4]].map(Number) as [number, number, number, number];
    assert.equal(run, back);
    for (let i = 0; i < run; i++) dark.add(`${x - 4 + i},${y - 4}`);
  }
  return dark;
}

describe('QR encoder', () => {
  it('picks the smallest version: 17 bytes fit version 1 at L, 14 at M; one more byte does not', () => {
    assert.equal(encodeQr('a'.repeat(17), 'L').version, 1);
    assert.equal(encodeQr('a'.repeat(18), 'L').version, 2);
    assert.equal(encodeQr('a'.repeat(14), 'M').version, 1);
    assert.equal(encodeQr('a'.repeat(15), 'M').version, 2);
    // A 120-byte otpauth URI: version 7 at M (122 bytes), version 6 at L.
    assert.equal(encodeQr('u'.repeat(120), 'M').version, 7);
  });

  it('refuses input over its hard limit before doing any work, and takes the limit itself', () => {
    assert.throws(() => encodeQr('a'.repeat(MAX_QR_BYTES + 1)), QrInputTooLong);
    assert.throws(() => encodeQr('é'.repeat(MAX_QR_BYTES)), QrInputTooLong, 'the limit is in UTF-8 bytes');
    assert.equal(encodeQr('a'.repeat(MAX_QR_BYTES), 'M').version, 40);
  });

  it('draws the finder patterns, timing patterns and the dark module where the standard puts them', () => {
    const matrix = encodeQr('otpauth://totp/x?secret=AAAA');
    const { size } = matrix;
    for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]] as const) {
      for (let d = -3; d <= 3; d++) {
        assert.equal(matrix.isDark(cx + d, cy - 3), true);
        assert.equal(matrix.isDark(cx + d, cy + 3), true);
      }
      assert.equal(matrix.isDark(cx - 2, cy), false);
      assert.equal(matrix.isDark(cx, cy), true);
    }
    for (let i = 8; i < size - 8; i++) {
      assert.equal(matrix.isDark(i, 6), i % 2 === 0);
      assert.equal(matrix.isDark(6, i), i % 2 === 0);
    }
    assert.equal(matrix.isDark(8, size - 8), true);
  });

  it('fuzz: random bytes of random lengths encode without throwing, in a symbol of the right size', () => {
    for (let round = 0; round < 60; round++) {
      const text = randomBytes(Math.floor(Math.random() * 400)).toString('latin1');
      const matrix = encodeQr(text, round % 2 === 0 ? 'M' : 'L');
      assert.equal(matrix.size, matrix.version * 4 + 17);
      assert.ok(matrix.mask >= 0 && matrix.mask < 8);
      assert.equal(matrix.isDark(-1, 0), false);
      assert.equal(matrix.isDark(matrix.size, 0), false);
    }
  });
});

describe('QR SVG', () => {
  it('draws exactly the dark modules of the matrix, inside a white square with a 4-module quiet zone', () => {
    const text = 'otpauth://totp/Gatehouse:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse';
    const matrix = encodeQr(text, 'M');
    const svg = renderQrSvg(text);
    assert.equal(svg, svgOf(matrix));
    const side = matrix.size + 8;
    assert.match(svg, new RegExp(`^<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}"`));
    assert.ok(svg.includes(`<rect width="${side}" height="${side}" fill="#fff"/>`));
    const drawn = modulesOfSvg(svg);
    let count = 0;
    for (let y = 0; y < matrix.size; y++) {
      for (let x = 0; x < matrix.size; x++) {
        assert.equal(drawn.has(`${x},${y}`), matrix.isDark(x, y), `module ${x},${y}`);
        if (matrix.isDark(x, y)) count++;
      }
    }
    assert.equal(drawn.size, count);
  });

  it('holds nothing but the symbol: no script, no text, no outside reference', () => {
    const svg = renderQrSvg('<script>alert(1)</script>"&');
    assert.ok(!svg.includes('script') && !svg.includes('&') && !svg.includes('href'));
  });
});
