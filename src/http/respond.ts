import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Serializes `body` and sends it; with sendRawJson, the only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string | string[]>>): void {
  sendRawJson(res, status, Buffer.from(JSON.stringify(body)), headers);
}

/** Sends bytes that already are JSON (a cached answer). */
export function sendRawJson(res: ServerResponse, status: number, json: Buffer, headers?: Readonly<Record<string, string | string[]>>): void {
  // Every answer is about accounts and sessions: never cached, never sniffed. A fresh literal,
  // not `{ ...COMMON, 'content-length': n }`: on Node 20 (V8 11.3) objects made by a spread
  // followed by another property are promoted out of the young generation in bulk, so under
  // load the old generation filled with answer headers (a full GC about every second).
  // `{ ...all, ...headers }` does the same; Object.assign does not.
  const all: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': json.length,
  };
  res.writeHead(status, headers === undefined ? all : Object.assign(all, headers));
  res.end(json);
}

/** Sends a static asset whose headers (type, length, policies) were all built once at start-up. */
export function sendStatic(res: ServerResponse, status: number, body: Buffer, headers: Readonly<OutgoingHttpHeaders>): void {
  res.writeHead(status, headers);
  res.end(body);
}
