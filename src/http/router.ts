import { MethodNotAllowed, RouteNotFound } from '../errors.js';

/** The route method that matches every request method. */
export const ANY_METHOD = '*';

export interface RouteMatch<H> {
  readonly handler: H;
  /** The raw (still percent-encoded) path parameter, when the route has one. */
  readonly param: string | undefined;
}

export interface Router<H> {
  /** Finds the handler for a path already stripped of its query; throws RouteNotFound or MethodNotAllowed. */
  match(method: string, path: string): RouteMatch<H>;
}

/**
 * A method+path table. A pattern is a literal path, or a literal prefix ending in `/:name`
 * that matches exactly one more non-empty segment. The method `*` answers every method the
 * path has no route of its own for (the forward endpoint: a proxy asks with the original method).
 */
export function createRouter<H>(routes: ReadonlyArray<{ method: string; path: string; handler: H }>): Router<H> {
  const literal = new Map<string, Map<string, H>>();
  const withParam = new Map<string, Map<string, H>>();
  for (const route of routes) {
    const colon = route.path.indexOf('/:');
    const table = colon < 0 ? literal : withParam;
    const key = colon < 0 ? route.path : route.path.slice(0, colon + 1);
    const methods = table.get(key) ?? new Map<string, H>();
    if (methods.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route.handler);
    table.set(key, methods);
  }

  return {
    match(method, path) {
      let methods = literal.get(path);
      let param: string | undefined;
      if (methods === undefined) {
        const slash = path.lastIndexOf('/');
        param = path.slice(slash + 1);
        methods = param === '' ? undefined : withParam.get(path.slice(0, slash + 1));
      }
      if (methods === undefined) throw new RouteNotFound();
      const handler = methods.get(method) ?? methods.get(ANY_METHOD);
      if (handler === undefined) throw new MethodNotAllowed([...methods.keys()]);
      return { handler, param };
    },
  };
}
