/** The route method that matches every request method. */
export const ANY_METHOD = '*';

/**
 * A route's path parameters by the names its pattern gives them (`/users/:username` → `username`),
 * each percent-decoded once. undefined for a segment that is no value once decoded: a bad escape or
 * invalid UTF-8, a dot segment (`.`, `..`, `%2E%2E`: proxies and browsers rewrite them) or a control
 * character. The route is still found (the judge answers a stranger first); its handler answers that
 * parameter as one that names nothing (400 or 404).
 */
export type PathParams = Readonly<Record<string, string | undefined>>;

interface RouteFound<H> {
  readonly handler: H;
  readonly params: PathParams;
}

/** No route for the request: `allow` lists the path's methods (405), undefined when nothing is at the path (404). */
export interface RouteMissing {
  readonly handler: undefined;
  readonly allow: readonly string[] | undefined;
}

interface PathRoutes<H> {
  /** By method, built once: a literal path's results carry no parameter. */
  readonly found: Map<string, RouteFound<H>>;
  notAllowed: RouteMissing;
}

const NOT_FOUND: RouteMissing = Object.freeze({ handler: undefined, allow: undefined });
const NO_PARAMS: PathParams = Object.freeze({});

/** A pattern with parameters: its segments, each a literal or `:name`. */
interface ParamPattern<H> {
  readonly segments: readonly string[];
  readonly routes: PathRoutes<H>;
}

/**
 * A method+path table. A pattern is a literal path, or segments any of which may be `:name`, each
 * matching one non-empty segment. A literal path wins; then, of the patterns that match, the one with a
 * literal segment where another has a parameter (earliest difference first). The method `*` answers every
 * method the path has no route of its own for (the forward endpoint: a proxy asks with the original method).
 * A miss is a result, not a thrown error: 404 and 405 are answers like any other, on a scanner's hot path.
 */
export function createRouter<H>(routes: ReadonlyArray<{ method: string; path: string; handler: H }>): {
  match(method: string, path: string): RouteFound<H> | RouteMissing;
} {
  const literal = new Map<string, PathRoutes<H>>();
  // Keyed by the pattern with its parameters' names left out.
  const withParams = new Map<string, ParamPattern<H>>();
  const newRoutes = (): PathRoutes<H> => ({ found: new Map<string, RouteFound<H>>(), notAllowed: NOT_FOUND });
  const routesOf = (pattern: string): PathRoutes<H> => {
    if (!pattern.includes('/:')) {
      const known = literal.get(pattern) ?? newRoutes();
      literal.set(pattern, known);
      return known;
    }
    const segments = pattern.split('/');
    const names = segments.filter(isParam);
    if (names.includes(':') || new Set(names).size !== names.length) {
      throw new TypeError(`route ${pattern}: every parameter needs a name of its own`);
    }
    const key = segments.map((segment) => (isParam(segment) ? ':' : segment)).join('/');
    const known = withParams.get(key) ?? { segments, routes: newRoutes() };
    withParams.set(key, known);
    return known.routes;
  };
  for (const route of routes) {
    const path = routesOf(route.path);
    if (path.found.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.path}`);
    path.found.set(route.method, Object.freeze({ handler: route.handler, params: NO_PARAMS }));
  }
  const patterns = [...withParams.values()].sort(byLiteralsFirst);
  for (const path of [...literal.values(), ...patterns.map((pattern) => pattern.routes)]) {
    const allow = Object.freeze([...path.found.keys()].filter((method) => method !== ANY_METHOD));
    path.notAllowed = Object.freeze({ handler: undefined, allow });
  }
  const find = (path: PathRoutes<H>, method: string): RouteFound<H> | undefined =>
    path.found.get(method) ?? path.found.get(ANY_METHOD);

  return {
    match(method, path) {
      const exact = literal.get(path);
      if (exact !== undefined) return find(exact, method) ?? exact.notAllowed;
      return patterns.length === 0 ? NOT_FOUND : matchPatterns(method, path);
    },
  };

  function matchPatterns(method: string, path: string): RouteFound<H> | RouteMissing {
    const parts = path.split('/');
    for (const pattern of patterns) {
      if (pattern.segments.length !== parts.length) continue;
      const isMatch = pattern.segments.every((segment, index) => (isParam(segment) ? parts[index] !== '' : parts[index] === segment));
      if (!isMatch) continue;
      const found = find(pattern.routes, method);
      if (found === undefined) return pattern.routes.notAllowed;
      const params: Record<string, string | undefined> = {};
      pattern.segments.forEach((segment, index) => {
        if (isParam(segment)) params[segment.slice(1)] = decodedSegment(parts[index] ?? '');
      });
      return Object.freeze({ handler: found.handler, params: Object.freeze(params) });
    }
    return NOT_FOUND;
  }
}

const isParam = (segment: string): boolean => segment.startsWith(':');

/** The pattern with a literal segment where the other has a parameter first (earliest difference). */
function byLiteralsFirst<H>(a: ParamPattern<H>, b: ParamPattern<H>): number {
  const index = a.segments.findIndex((segment, at) => isParam(segment) !== isParam(b.segments[at] ?? ''));
  return index < 0 ? 0 : isParam(a.segments[index] ?? '') ? 1 : -1;
}

// The control characters the stored-value rules refuse (validate/check.ts): no name or id holds one.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** One raw path segment percent-decoded once, or undefined when it is no value (see PathParams). */
function decodedSegment(raw: string): string | undefined {
  let value: string;
  try {
    value = raw.includes('%') ? decodeURIComponent(raw) : raw;
  } catch {
    return undefined;
  }
  if (value === '.' || value === '..' || CONTROL_CHARACTER.test(value)) return undefined;
  return value;
}
