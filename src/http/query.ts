import { isUtf8 } from 'node:buffer';

// Every parameter the service reads (`token`, `cookie`, `level`, `group`, `mfa`, `tokens`, `basic`,
// `login`, `rd`) is among the first few a client sends; the cap bounds the parser's work before any
// credential is checked.
export const MAX_QUERY_PAIRS = 64;

/**
 * Parses a query string (without "?") into a null-prototype map; the first value wins; pairs
 * after the first MAX_QUERY_PAIRS are ignored. Value-less parameters (a cache-busting
 * `?1763752800123`), empty names and bad escapes are skipped, never an error.
 */
export function parseQuery(search: string): Record<string, string> {
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  // One pass, no array of pairs (every ?token= request); the next "=" is looked up again only once passed.
  let equals = -1;
  let pairs = 0;
  for (let start = 0; start < search.length && pairs < MAX_QUERY_PAIRS; ) {
    let end = search.indexOf('&', start);
    if (end < 0) end = search.length;
    if (equals < start) {
      equals = search.indexOf('=', start);
      if (equals < 0) equals = search.length;
    }
    if (equals > start && equals < end) {
      const name = decodeComponent(search.slice(start, equals));
      const raw = search.slice(equals + 1, end);
      // A bad value is kept raw: skipping it would let a later duplicate win instead of the first.
      if (name !== undefined && !Object.hasOwn(query, name)) query[name] = decodeComponent(raw) ?? raw;
      pairs++;
    }
    start = end + 1;
  }
  return query;
}

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * decodeURIComponent (with "+" as a space) that never throws (a query of 16 KB of bad escapes made
 * every request wait 50 ms for stack traces): undefined for a bad escape or escapes that are not UTF-8.
 */
function decodeComponent(text: string): string | undefined {
  const hasEscape = text.includes('%');
  if (!hasEscape && !text.includes('+')) return text;
  const spaced = text.replaceAll('+', ' ');
  if (!hasEscape) return spaced;
  if (BAD_ESCAPE.test(spaced)) return undefined;
  let isValid = true;
  const decoded = spaced.replace(ESCAPE_RUN, (run) => {
    const bytes = Buffer.from(run.replaceAll('%', ''), 'hex');
    if (isUtf8(bytes)) return bytes.toString('utf8');
    isValid = false;
    return '';
  });
  return isValid ? decoded : undefined;
}
