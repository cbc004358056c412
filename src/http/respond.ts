import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Serializes `body` and sends it; with sendRawJson, the only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string | string[]>>): void {
  sendRawJson(res, status, JSON.stringify(body), headers);
}

/**
 * Sends text that already is JSON (a cached answer). An ASCII string goes out in one chunk with
 * the header block (node joins a string body to the headers; a Buffer is a second chunk of a
 * writev): about 5% less CPU per answer. It is written as latin1, so header values keep node's
 * usual byte for byte encoding; any other string goes out as UTF-8 bytes, as a Buffer does.
 */
export function sendRawJson(res: ServerResponse, status: number, json: string | Buffer, headers?: Readonly<Record<string, string | string[]>>): void {
  // Every answer is about accounts and sessions: never cached, never sniffed. A fresh literal,
  // not `{ ...COMMON, 'content-length': n }`: on Node 20 (V8 11.3) objects made by a spread
  // followed by another property are promoted out of the young generation in bulk, so under
  // load the old generation filled with answer headers (a full GC about every second).
  // `{ ...all, ...headers }` does the same; Object.assign does not.
  const all: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': typeof json === 'string' ? Buffer.byteLength(json) : json.length,
  };
  res.writeHead(status, headers === undefined ? all : Object.assign(all, headers));
  // Joined to the header block, a string would be encoded with it: UTF-8 would turn a header's
  // latin1 byte (0x80-0xff) into two. So only ASCII (byte length = length) is sent as a string.
  if (typeof json === 'string' && all['content-length'] !== json.length) res.end(Buffer.from(json));
  else res.end(json, 'latin1');
}

/**
 * JSON text in the form sendRawJson sends fastest, for an answer made once and sent many times:
 * ASCII stays a string (one chunk with the headers); anything else is encoded to UTF-8 once here
 * rather than twice on every send (its length, then its bytes).
 */
export function preparedJson(text: string): string | Buffer {
  return Buffer.byteLength(text) === text.length ? text : Buffer.from(text);
}

/** Sends a static asset whose headers (type, length, policies) were all built once at start-up. */
export function sendStatic(res: ServerResponse, status: number, body: Buffer, headers: Readonly<OutgoingHttpHeaders>): void {
  res.writeHead(status, headers);
  res.end(body);
}
