/** The route method that matches every request method. */
export const ANY_METHOD = '*';

interface RouteFound<H> {
  readonly handler: H;
  /** The raw (still percent-encoded) path parameter, when the route has one; with several, the last. */
  readonly param: string | undefined;
  /** Every raw path parameter in order, for a pattern with a parameter before its end (only then present). */
  readonly params?: readonly string[];
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

/** A pattern with a parameter before its end (`/users/:name/sessions/:id`): its segments, undefined for a parameter. */
interface SegmentPattern<H> {
  readonly segments: readonly (string | undefined)[];
  readonly routes: PathRoutes<H>;
}

/**
 * A method+path table. A pattern is a literal path, or a literal prefix ending in `/:name`
 * that matches exactly one more non-empty segment, or segments any of which may be `:name`, each
 * matching one non-empty segment (tried only when the others miss). The method `*` answers every method the
 * path has no route of its own for (the forward endpoint: a proxy asks with the original method).
 * A miss is a result, not a thrown error: 404 and 405 are answers like any other, on a scanner's hot path.
 */
export function createRouter<H>(routes: ReadonlyArray<{ method: string; path: string; handler: H }>): {
  match(method: string, path: string): RouteFound<H> | RouteMissing;
} {
  const literal = new Map<string, PathRoutes<H>>();
  const withParam = new Map<string, PathRoutes<H>>();
  // Keyed by the pattern with its parameters' names left out.
  const withSegments = new Map<string, SegmentPattern<H>>();
  const routesOf = (pattern: string): PathRoutes<H> => {
    const colon = pattern.indexOf('/:');
    const isSegmented = colon >= 0 && pattern.indexOf('/', colon + 1) >= 0;
    const newRoutes = (): PathRoutes<H> => ({ found: new Map<string, RouteFound<H>>(), notAllowed: NOT_FOUND });
    if (isSegmented) {
      const segments = pattern.split('/').map((segment) => (segment.startsWith(':') ? undefined : segment));
      const key = segments.map((segment) => segment ?? ':').join('/');
      const known = withSegments.get(key) ?? { segments, routes: newRoutes() };
      withSegments.set(key, known);
      return known.routes;
    }
    const table = colon < 0 ? literal : withParam;
    const key = colon < 0 ? pattern : pattern.slice(0, colon + 1);
    const known = table.get(key) ?? newRoutes();
    table.set(key, known);
    return known;
  };
  for (const route of routes) {
    const path = routesOf(route.path);
    if (path.found.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.path}`);
    path.found.set(route.method, Object.freeze({ handler: route.handler, param: undefined }));
  }
  const segmented = [...withSegments.values()];
  for (const path of [...literal.values(), ...withParam.values(), ...segmented.map((pattern) => pattern.routes)]) {
    const allow = Object.freeze([...path.found.keys()].filter((method) => method !== ANY_METHOD));
    path.notAllowed = Object.freeze({ handler: undefined, allow });
  }
  const find = (path: PathRoutes<H>, method: string): RouteFound<H> | undefined =>
    path.found.get(method) ?? path.found.get(ANY_METHOD);

  return {
    match(method, path) {
      const exact = literal.get(path);
      if (exact !== undefined) return find(exact, method) ?? exact.notAllowed;
      const slash = path.lastIndexOf('/');
      const param = path.slice(slash + 1);
      const withName = param === '' ? undefined : withParam.get(path.slice(0, slash + 1));
      if (withName === undefined) return segmented.length === 0 ? NOT_FOUND : matchSegments(method, path);
      const found = find(withName, method);
      return found === undefined ? withName.notAllowed : { handler: found.handler, param };
    },
  };

  function matchSegments(method: string, path: string): RouteFound<H> | RouteMissing {
    const parts = path.split('/');
    for (const pattern of segmented) {
      if (pattern.segments.length !== parts.length) continue;
      const params: string[] = [];
      const isMatch = pattern.segments.every((segment, index) => {
        const part = parts[index] ?? '';
        if (segment !== undefined) return part === segment;
        params.push(part);
        return part !== '';
      });
      if (!isMatch) continue;
      const found = find(pattern.routes, method);
      return found === undefined ? pattern.routes.notAllowed : { handler: found.handler, param: params.at(-1), params };
    }
    return NOT_FOUND;
  }
}
