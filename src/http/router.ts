/** The route method that matches every request method. */
export const ANY_METHOD = '*';

export interface RouteFound<H> {
  readonly handler: H;
  /** The raw (still percent-encoded) path parameter, when the route has one. */
  readonly param: string | undefined;
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

/**
 * A method+path table. A pattern is a literal path, or a literal prefix ending in `/:name`
 * that matches exactly one more non-empty segment. The method `*` answers every method the
 * path has no route of its own for (the forward endpoint: a proxy asks with the original method).
 * A miss is a result, not a thrown error: 404 and 405 are answers like any other, on a scanner's hot path.
 */
export function createRouter<H>(routes: ReadonlyArray<{ method: string; path: string; handler: H }>): {
  match(method: string, path: string): RouteFound<H> | RouteMissing;
} {
  const literal = new Map<string, PathRoutes<H>>();
  const withParam = new Map<string, PathRoutes<H>>();
  for (const route of routes) {
    const colon = route.path.indexOf('/:');
    const table = colon < 0 ? literal : withParam;
    const key = colon < 0 ? route.path : route.path.slice(0, colon + 1);
    const path = table.get(key) ?? { found: new Map<string, RouteFound<H>>(), notAllowed: NOT_FOUND };
    if (path.found.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.path}`);
    path.found.set(route.method, Object.freeze({ handler: route.handler, param: undefined }));
    table.set(key, path);
  }
  for (const path of [...literal.values(), ...withParam.values()]) {
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
      if (withName === undefined) return NOT_FOUND;
      const found = find(withName, method);
      return found === undefined ? withName.notAllowed : { handler: found.handler, param };
    },
  };
}
