import { encodeQr, type QrMatrix } from './qr-encode.js';

// Four light modules around the symbol: the quiet zone the standard requires (section 6.3.8).
const QUIET_ZONE = 4;

/**
 * `text` as a QR code in SVG: one path of dark modules (runs of a row merged) on a white square,
 * in module units, sized by whoever shows it. Throws QrInputTooLong for more than MAX_QR_BYTES.
 */
export function renderQrSvg(text: string): string {
  return svgOf(encodeQr(text, 'M'));
}

export function svgOf(matrix: QrMatrix): string {
  const side = matrix.size + QUIET_ZONE * 2;
  let path = '';
  for (let y = 0; y < matrix.size; y++) {
    for (let x = 0; x < matrix.size; x++) {
      // A run of dark modules starts here: one rectangle for all of it.
      if (!matrix.isDark(x, y) || matrix.isDark(x - 1, y)) continue;
      let run = 1;
      while (matrix.isDark(x + run, y)) run++;
      path += `M${x + QUIET_ZONE} ${y + QUIET_ZONE}h${run}v1h-${run}z`;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges">` +
    `<rect width="${side}" height="${side}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`
  );
}
