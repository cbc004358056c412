/** The route method that matches every request method. */
export const ANY_METHOD = '*';

export interface RouteFound<H> {
  readonly handler: H;
  /** The raw (still percent-encoded) path parameter, when the route has one. */
  readonly param: string | undefined;
}

/** No route for the request: `allow` lists the path's methods (405), or is undefined when nothing is at the path (404). */
export interface RouteMissing {
  readonly handler: undefined;
  readonly allow: readonly string[] | undefined;
}

export interface Router<H> {
  /**
   * Finds the handler for a path already stripped of its query. A miss is a result, not a
   * thrown error: 404 and 405 are answers like any other, and on the hot path of a scanner.
   */
  match(method: string, path: string): RouteFound<H> | RouteMissing;
}

interface PathRoutes<H> {
  /** By method; a literal path's results are built once (they carry no parameter). */
  readonly byMethod: Map<string, H>;
  readonly found: Map<string, RouteFound<H>>;
  notAllowed: RouteMissing;
}

const NOT_FOUND: RouteMissing = Object.freeze({ handler: undefined, allow: undefined });

/**
 * A method+path table. A pattern is a literal path, or a literal prefix ending in `/:name`
 * that matches exactly one more non-empty segment. The method `*` answers every method the
 * path has no route of its own for (the forward endpoint: a proxy asks with the original method).
 */
export function createRouter<H>(routes: ReadonlyArray<{ method: string; path: string; handler: H }>): Router<H> {
  const literal = new Map<string, PathRoutes<H>>();
  const withParam = new Map<string, PathRoutes<H>>();
  for (const route of routes) {
    const colon = route.path.indexOf('/:');
    const table = colon < 0 ? literal : withParam;
    const key = colon < 0 ? route.path : route.path.slice(0, colon + 1);
    const path = table.get(key) ?? { byMethod: new Map<string, H>(), found: new Map<string, RouteFound<H>>(), notAllowed: NOT_FOUND };
    if (path.byMethod.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.path}`);
    path.byMethod.set(route.method, route.handler);
    path.found.set(route.method, Object.freeze({ handler: route.handler, param: undefined }));
    table.set(key, path);
  }
  for (const path of [...literal.values(), ...withParam.values()]) {
    path.notAllowed = Object.freeze({ handler: undefined, allow: Object.freeze([...path.byMethod.keys()].filter((method) => method !== ANY_METHOD)) });
  }

  return {
    match(method, path) {
      const exact = literal.get(path);
      if (exact !== undefined) return exact.found.get(method) ?? exact.found.get(ANY_METHOD) ?? exact.notAllowed;
      const slash = path.lastIndexOf('/');
      const param = path.slice(slash + 1);
      const withName = param === '' ? undefined : withParam.get(path.slice(0, slash + 1));
      if (withName === undefined) return NOT_FOUND;
      const handler = withName.byMethod.get(method) ?? withName.byMethod.get(ANY_METHOD);
      return handler === undefined ? withName.notAllowed : { handler, param };
    },
  };
}
