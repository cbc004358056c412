/**
 * Parses a query string (without "?") into a null-prototype map; the first value wins.
 * Value-less parameters (a cache-busting `?1763752800123`) and bad escapes are skipped, never an error.
 */
export function parseQuery(search: string): Record<string, string> {
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  // One pass over the string, no array of pairs: this runs for every ?token= request. Both
  // searches only move forward (the next "=" is looked up again only once a pair has passed it).
  let equals = -1;
  for (let start = 0; start < search.length; ) {
    let end = search.indexOf('&', start);
    if (end < 0) end = search.length;
    if (equals < start && equals !== -2) {
      equals = search.indexOf('=', start);
      if (equals < 0) equals = -2; // no "=" in the rest of the query
    }
    // Pairs without "=" (value-less) or with an empty name are skipped.
    if (equals > start && equals < end) addPair(query, search.slice(start, equals), search.slice(equals + 1, end));
    start = end + 1;
  }
  return query;
}

function addPair(query: Record<string, string>, rawName: string, raw: string): void {
  let name: string;
  try {
    name = decodeComponent(rawName);
  } catch {
    return;
  }
  if (Object.hasOwn(query, name)) return;
  try {
    query[name] = decodeComponent(raw);
  } catch {
    // Keep the raw value: skipping it would let a later duplicate win instead of the first.
    query[name] = raw;
  }
}

// Tokens are base64url and need no decoding: skip the work when there is nothing to decode.
function decodeComponent(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  return decodeURIComponent(text.replaceAll('+', ' '));
}
