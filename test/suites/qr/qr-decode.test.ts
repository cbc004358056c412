// Our QR codes read back by a real decoder (zbarimg, Debian zbar-tools): the module matrix for
// every mask, both levels and versions up to 27, and the SVG the account API answers, drawn by
// Chromium, back to the exact otpauth:// URI.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeQr, type ErrorCorrection, type QrMatrix } from '../../../src/totp/qr-encode.js';
import { Chromium } from '../../helpers/chromium.js';
import { createUser, startPopulatedServer, type TestUser } from '../../helpers/api.js';
import type { TestServer } from '../../helpers/server.js';

const ZBARIMG = process.env['ZBARIMG_PATH'] ?? '/usr/bin/zbarimg';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-qr-'));
});
after(() => rm(dir, { recursive: true, force: true }));

let fileCount = 0;
/** What zbarimg reads from the image file holding `bytes`: the text of its one symbol. */
async function decode(bytes: Buffer, extension: string): Promise<string> {
  const path = join(dir, `symbol-${fileCount++}.${extension}`);
  await writeFile(path, bytes);
  return new Promise((resolve, reject) => {
    execFile(ZBARIMG, ['--raw', '--quiet', '-Sdisable', '-Sqrcode.enable', path], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`zbarimg found no QR code in ${path}: ${error.message} ${stderr}`));
      // --raw prints the symbol's text and a newline.
      else resolve(stdout.replace(/\n$/, ''));
    });
  });
}

/** A greyscale PGM of the matrix, 4 pixels a module, with the 4-module quiet zone. */
function pgmOf(matrix: QrMatrix): Buffer {
  const scale = 4;
  const quiet = 4;
  const side = (matrix.size + quiet * 2) * scale;
  const pixels = Buffer.alloc(side * side, 255);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      if (matrix.isDark(Math.floor(x / scale) - quiet, Math.floor(y / scale) - quiet)) pixels[y * side + x] = 0;
    }
  }
  return Buffer.concat([Buffer.from(`P5 ${side} ${side} 255\n`), pixels]);
}

describe('QR matrices read back by zbarimg', () => {
  const uri = 'otpauth://totp/Gatehouse:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30';
  for (let mask = 0; mask < 8; mask++) {
    it(`reads a ${uri.length}-byte otpauth URI drawn with mask ${mask}`, async () => {
      const matrix = encodeQr(uri, 'M', mask);
      assert.equal(matrix.mask, mask);
      assert.equal(await decode(pgmOf(matrix), 'pgm'), uri);
    });
  }

  const lengths = [1, 14, 40, 120, 200, 330, 500, 800];
  for (const level of ['M', 'L'] as ErrorCorrection[]) {
    for (const length of lengths) {
      it(`reads ${length} bytes at level ${level} in the smallest version that holds them`, async () => {
        let text = '';
        for (let i = 0; text.length < length; i++) text += String.fromCharCode(0x21 + ((i * 7) % 94));
        const matrix = encodeQr(text, level);
        assert.equal(matrix.size, matrix.version * 4 + 17);
        assert.equal(await decode(pgmOf(matrix), 'pgm'), text, `version ${matrix.version}`);
      });
    }
  }
});

describe('the SVG of POST /api/auth/account/totp, drawn by Chromium, read by zbarimg', () => {
  let server: TestServer;
  let root: TestUser;
  let browser: Chromium;
  before(async () => {
    ({ server, root } = await startPopulatedServer());
    browser = await Chromium.launch();
  });
  after(async () => {
    await browser.close();
    await server.close();
  });

  const names = ['alice', 'bob smith+qr@example.org', `long-${'ü'.repeat(200)}`, 'ünïcødé 名前 🔑'];
  for (const name of names) {
    it(`reads back the exact URI for the username ${JSON.stringify(name.slice(0, 24))}`, async () => {
      const user = await createUser(server, root.token, { username: `${name}-${fileCount}` });
      const response = await server.request({ method: 'POST', path: '/api/auth/account/totp', token: user.token, body: { password: user.password } });
      assert.equal(response.status, 200, response.text);
      const { uri, qr } = response.json as { uri: string; qr: string };
      const page = await browser.newPage();
      try {
        await page.setViewport(480, 480);
        const html = `<!doctype html><body style="margin:0;background:#fff"><img style="display:block;width:480px;height:480px" src="data:image/svg+xml;base64,${Buffer.from(qr).toString('base64')}"></body>`;
        await page.navigate(`data:text/html;base64,${Buffer.from(html).toString('base64')}`);
        await page.waitFor('document.images[0].complete && document.images[0].naturalWidth > 0');
        assert.equal(await decode(await page.screenshot(), 'png'), uri);
      } finally {
        await page.close();
      }
    });
  }
});
