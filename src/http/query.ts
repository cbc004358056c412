/**
 * Parses a query string (without "?") into a null-prototype map; the first value wins.
 * Value-less parameters (a cache-busting `?1763752800123`) and bad escapes are skipped, never an error.
 */
export function parseQuery(search: string): Record<string, string> {
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  if (search === '') return query;
  for (const pair of search.split('&')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    let name: string;
    try {
      name = decodeComponent(pair.slice(0, equals));
    } catch {
      continue;
    }
    if (Object.hasOwn(query, name)) continue;
    const raw = pair.slice(equals + 1);
    try {
      query[name] = decodeComponent(raw);
    } catch {
      // Keep the raw value: skipping it would let a later duplicate win instead of the first.
      query[name] = raw;
    }
  }
  return query;
}

// Tokens are base64url and need no decoding: skip the work when there is nothing to decode.
function decodeComponent(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  return decodeURIComponent(text.replaceAll('+', ' '));
}
