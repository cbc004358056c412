// A QR Code (ISO/IEC 18004) encoder for one job: a short ASCII or UTF-8 text such as an
// otpauth:// URI, in byte mode, at error correction level M (15% of the symbol may be lost or
// misread) or L. The smallest version that holds the text is used; the mask is the one with the
// lowest penalty score, as the standard's section 7.8.3 says.

export type ErrorCorrection = 'L' | 'M';

/** What byte mode at level M holds in version 40. Longer input is refused before any work. */
export const MAX_QR_BYTES = 2331;

export class QrInputTooLong extends Error {}

/** The modules of a symbol, row by row: true is dark. */
export interface QrMatrix {
  readonly version: number;
  readonly size: number;
  readonly mask: number;
  isDark(x: number, y: number): boolean;
}

// Per version (index 1-40): error correction codewords per block, and the number of blocks.
const ECC_PER_BLOCK = {
  L: [
    0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
    28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
  ],
  M: [
    0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
    26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  ],
};
const BLOCKS = {
  L: [
    0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
    8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
  ],
  M: [
    0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
    17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
  ],
};
// The two format bits of each level (section 7.9.1): L is 01, M is 00.
const FORMAT_BITS = { L: 1, M: 0 };

/**
 * Encodes `text` (as UTF-8) in the smallest version that holds it, with the mask of lowest
 * penalty unless `forcedMask` (0-7, for tests of every mask) names one. Throws QrInputTooLong.
 */
export function encodeQr(text: string, level: ErrorCorrection = 'M', forcedMask?: number): QrMatrix {
  const data = Buffer.from(text, 'utf8');
  if (data.length > MAX_QR_BYTES) throw new QrInputTooLong(`a QR code holds at most ${MAX_QR_BYTES} bytes here (got ${data.length})`);
  // Mode, count and data bits; MAX_QR_BYTES fits in version 40.
  let version = 1;
  while (4 + (version <= 9 ? 8 : 16) + data.length * 8 > dataCodewords(version, level) * 8) version++;
  const codewords = withErrorCorrection(dataBits(data, version, level), version, level);

  const size = version * 4 + 17;
  const modules = new Uint8Array(size * size);
  const reserved = new Uint8Array(size * size);
  const set = (x: number, y: number, isDark: boolean): void => {
    modules[y * size + x] = isDark ? 1 : 0;
    reserved[y * size + x] = 1;
  };
  drawFunctionPatterns(version, size, set);
  drawCodewords(codewords, size, modules, reserved);

  let best = 0;
  let bestPenalty = Infinity;
  for (const mask of MASKS.keys()) {
    if (forcedMask !== undefined && mask !== forcedMask) continue;
    applyMask(mask, size, modules, reserved);
    drawFormatBits(level, mask, size, set);
    const penalty = penaltyOf(size, modules);
    if (penalty < bestPenalty) {
      best = mask;
      bestPenalty = penalty;
    }
    applyMask(mask, size, modules, reserved); // XOR again: undone
  }
  applyMask(best, size, modules, reserved);
  drawFormatBits(level, best, size, set);
  return {
    version,
    size,
    mask: best,
    isDark: (x, y) => x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x] === 1,
  };
}

/** Data modules of a version (section 7.1): the whole symbol minus function patterns, format and version info. */
function rawDataModules(version: number): number {
  let result = (16 * version + 128) * version + 64;
  if (version >= 2) {
    const alignments = Math.floor(version / 7) + 2;
    result -= (25 * alignments - 10) * alignments - 55;
    if (version >= 7) result -= 36;
  }
  return result;
}

function dataCodewords(version: number, level: ErrorCorrection): number {
  return Math.floor(rawDataModules(version) / 8) - (ECC_PER_BLOCK[level][version] ?? 0) * (BLOCKS[level][version] ?? 0);
}

/** Section 7.4: byte mode indicator 0100, the count, the bytes, a terminator, then pad codewords. */
function dataBits(data: Buffer, version: number, level: ErrorCorrection): Uint8Array {
  const capacity = dataCodewords(version, level);
  const out = new Uint8Array(capacity);
  let bitLength = 0;
  const append = (value: number, count: number): void => {
    for (let i = count - 1; i >= 0; i--, bitLength++) {
      if (((value >>> i) & 1) === 1) out[bitLength >>> 3] = (out[bitLength >>> 3] ?? 0) | (0x80 >>> (bitLength & 7));
    }
  };
  append(0b0100, 4);
  append(data.length, version <= 9 ? 8 : 16);
  for (const byte of data) append(byte, 8);
  append(0, Math.min(4, capacity * 8 - bitLength));
  bitLength = Math.ceil(bitLength / 8) * 8;
  for (let pad = 0xec; bitLength < capacity * 8; pad ^= 0xec ^ 0x11) append(pad, 8);
  return out;
}

/** Section 7.5-7.6: split into blocks, add Reed-Solomon codewords to each, interleave. */
function withErrorCorrection(data: Uint8Array, version: number, level: ErrorCorrection): Uint8Array {
  const blockCount = BLOCKS[level][version] ?? 1;
  const eccLength = ECC_PER_BLOCK[level][version] ?? 0;
  const total = Math.floor(rawDataModules(version) / 8);
  const shortBlocks = blockCount - (total % blockCount);
  const shortLength = Math.floor(total / blockCount) - eccLength;
  const divisor = reedSolomonDivisor(eccLength);
  const dataBlocks: Uint8Array[] = [];
  const eccBlocks: Uint8Array[] = [];
  for (let i = 0, offset = 0; i < blockCount; i++) {
    const length = shortLength + (i < shortBlocks ? 0 : 1);
    const block = data.subarray(offset, offset + length);
    offset += length;
    dataBlocks.push(block);
    eccBlocks.push(reedSolomonRemainder(block, divisor));
  }
  const out = new Uint8Array(total);
  let index = 0;
  for (let i = 0; i <= shortLength; i++) {
    for (const block of dataBlocks) if (i < block.length) out[index++] = block[i] ?? 0;
  }
  for (let i = 0; i < eccLength; i++) for (const block of eccBlocks) out[index++] = block[i] ?? 0;
  return out;
}

/** Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1 (0x11D), the QR field. */
function gfMultiply(x: number, y: number): number {
  let product = 0;
  for (let i = 7; i >= 0; i--) {
    product = (product << 1) ^ ((product >>> 7) * 0x11d);
    product ^= ((y >>> i) & 1) * x;
  }
  return product;
}

/** The generator polynomial (x - a^0)(x - a^1)...(x - a^(degree-1)), leading 1 left out. */
function reedSolomonDivisor(degree: number): Uint8Array {
  const result = new Uint8Array(degree);
  result[degree - 1] = 1;
  let root = 1;
  for (let i = 0; i < degree; i++) {
    for (let j = 0; j < degree; j++) {
      result[j] = gfMultiply(result[j] ?? 0, root) ^ (j + 1 < degree ? (result[j + 1] ?? 0) : 0);
    }
    root = gfMultiply(root, 0x02);
  }
  return result;
}

function reedSolomonRemainder(data: Uint8Array, divisor: Uint8Array): Uint8Array {
  const result = new Uint8Array(divisor.length);
  for (const byte of data) {
    const factor = byte ^ (result[0] ?? 0);
    result.copyWithin(0, 1);
    result[result.length - 1] = 0;
    for (let i = 0; i < result.length; i++) result[i] = (result[i] ?? 0) ^ gfMultiply(divisor[i] ?? 0, factor);
  }
  return result;
}

/** Finder, separator, timing and alignment patterns, the dark module, and the version information (section 6.3). */
function drawFunctionPatterns(
  version: number, size: number, set: (x: number, y: number, isDark: boolean) => void,
): void {
  for (let i = 0; i < size; i++) {
    set(6, i, i % 2 === 0);
    set(i, 6, i % 2 === 0);
  }
  // Finders (7x7 and a light separator) and alignment patterns (5x5): rings by Chebyshev distance.
  const rings = (cx: number, cy: number, radius: number, isDarkAt: (distance: number) => boolean): void => {
    for (let y = Math.max(0, cy - radius); y <= Math.min(size - 1, cy + radius); y++) {
      for (let x = Math.max(0, cx - radius); x <= Math.min(size - 1, cx + radius); x++) {
        set(x, y, isDarkAt(Math.max(Math.abs(x - cx), Math.abs(y - cy))));
      }
    }
  };
  for (const [cx, cy] of [[3, 3], [size - 4, 3], [3, size - 4]] as const) rings(cx, cy, 4, (d) => d !== 2 && d !== 4);
  const positions = alignmentPositions(version, size);
  const last = positions.length - 1;
  positions.forEach((cx, i) => {
    positions.forEach((cy, j) => {
      // Not over the three finder patterns.
      if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) return;
      rings(cx, cy, 2, (d) => d !== 1);
    });
  });
  // Format information areas are reserved now and written once the mask is chosen.
  drawFormatBits('M', 0, size, set);
  if (version >= 7) {
    // Section 7.10: 6 version bits and 12 BCH(18,6) check bits (generator 0x1F25).
    const bits = withBch(version, 12, 0x1f25);
    for (let i = 0; i < 18; i++) {
      const isDark = ((bits >>> i) & 1) === 1;
      const a = size - 11 + (i % 3);
      const b = Math.floor(i / 3);
      set(a, b, isDark);
      set(b, a, isDark);
    }
  }
}

/** Centre coordinates of alignment patterns (Annex E): 6, then evenly spaced up to size - 7. */
function alignmentPositions(version: number, size: number): number[] {
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  const step = version === 32 ? 26 : Math.ceil((version * 4 + 4) / (count * 2 - 2)) * 2;
  const result = [6];
  for (let i = 0, position = size - 7; i < count - 1; i++, position -= step) result.splice(1, 0, position);
  return result;
}

/** Section 7.9: level and mask, BCH(15,5) check bits (generator 0x537), XOR 0x5412, written twice. */
function drawFormatBits(
  level: ErrorCorrection, mask: number, size: number, set: (x: number, y: number, isDark: boolean) => void,
): void {
  const bits = withBch((FORMAT_BITS[level] << 3) | mask, 10, 0x537) ^ 0x5412;
  const bit = (i: number): boolean => ((bits >>> i) & 1) === 1;
  // Around the top-left finder.
  for (let i = 0; i <= 5; i++) set(8, i, bit(i));
  set(8, 7, bit(6));
  set(8, 8, bit(7));
  set(7, 8, bit(8));
  for (let i = 9; i < 15; i++) set(14 - i, 8, bit(i));
  // Split between the top-right and bottom-left finders.
  for (let i = 0; i < 8; i++) set(size - 1 - i, 8, bit(i));
  for (let i = 8; i < 15; i++) set(8, size - 15 + i, bit(i));
  set(8, size - 8, true); // the dark module
}

/** Section 7.7.3: two-module columns from the right, zigzagging up and down, skipping the vertical timing column. */
function drawCodewords(codewords: Uint8Array, size: number, modules: Uint8Array, reserved: Uint8Array): void {
  let index = 0;
  const totalBits = codewords.length * 8;
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    const isUpward = ((right + 1) & 2) === 0;
    for (let vertical = 0; vertical < size; vertical++) {
      const y = isUpward ? size - 1 - vertical : vertical;
      for (let j = 0; j < 2; j++) {
        const x = right - j;
        if (reserved[y * size + x] === 1) continue;
        // Remainder bits (past the last codeword) stay light.
        if (index < totalBits) modules[y * size + x] = ((codewords[index >>> 3] ?? 0) >>> (7 - (index & 7))) & 1;
        index++;
      }
    }
  }
}

/** `data` followed by its BCH check bits: the remainder of data * x^degree by `generator`. */
function withBch(data: number, degree: number, generator: number): number {
  let remainder = data;
  for (let i = 0; i < degree; i++) remainder = (remainder << 1) ^ ((remainder >>> (degree - 1)) * generator);
  return (data << degree) | remainder;
}

/** Section 7.8.2 mask patterns, x the column and y the row: where a data module is flipped. */
const MASKS: readonly ((x: number, y: number) => boolean)[] = [
  (x, y) => (x + y) % 2 === 0,
  (_x, y) => y % 2 === 0,
  (x) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(x / 3) + Math.floor(y / 2)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];

/** XORs mask `mask` over every data module: applying it twice undoes it. */
function applyMask(mask: number, size: number, modules: Uint8Array, reserved: Uint8Array): void {
  const isFlipped = MASKS[mask];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      if (reserved[i] !== 1 && isFlipped?.(x, y) === true) modules[i] = (modules[i] ?? 0) ^ 1;
    }
  }
}

/** Section 7.8.3 penalty: runs of five or more, 2x2 blocks, finder-like 1:1:3:1:1 patterns, and dark/light balance. */
function penaltyOf(size: number, modules: Uint8Array): number {
  const at = (x: number, y: number): number => modules[y * size + x] ?? 0;
  let penalty = 0;
  for (const isRow of [true, false]) {
    for (let line = 0; line < size; line++) {
      let cells = '';
      for (let i = 0; i < size; i++) cells += isRow ? at(i, line) : at(line, i);
      // Runs of five or more: 3, plus 1 per module beyond five.
      for (const run of cells.match(/0{5,}|1{5,}/g) ?? []) penalty += run.length - 2;
      // 1:1:3:1:1 with four light modules before or after (light beyond the edge counts).
      penalty += 40 * (`0000${cells}0000`.match(/(?=10111010000|00001011101)/g)?.length ?? 0);
    }
  }
  for (let y = 0; y + 1 < size; y++) {
    for (let x = 0; x + 1 < size; x++) {
      const colour = at(x, y);
      if (colour === at(x + 1, y) && colour === at(x, y + 1) && colour === at(x + 1, y + 1)) penalty += 3;
    }
  }
  let dark = 0;
  for (const module of modules) dark += module;
  const total = size * size;
  penalty += 10 * (Math.ceil(Math.abs(dark * 20 - total * 10) / total) - 1);
  return penalty;
}
