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
    try {
      const name = decodeURIComponent(pair.slice(0, equals).replaceAll('+', ' '));
      if (!Object.hasOwn(query, name)) query[name] = decodeURIComponent(pair.slice(equals + 1).replaceAll('+', ' '));
    } catch {
      continue;
    }
  }
  return query;
}
