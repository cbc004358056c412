import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Serializes `body` and sends it; with sendRawJson and sendPrepared, the only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string | string[]>>): void {
  sendRawJson(res, status, JSON.stringify(body), headers);
}

/**
 * Sends text that already is JSON. A small ASCII string goes out in one chunk with the header block
 * (node joins a string body to the headers; a Buffer is a second chunk of a writev): about 5%
 * less CPU per answer. It is written as latin1, so header values keep node's usual byte for byte
 * encoding; any other string goes out as UTF-8 bytes, as a Buffer does.
 */
export function sendRawJson(res: ServerResponse, status: number, json: string | Buffer, headers?: Readonly<Record<string, string | string[]>>): void {
  const body = typeof json === 'string' ? bodyOf(json) : json;
  res.writeHead(status, answerHeaders(body, headers));
  endWith(res, body);
}

// Above this, a body is sent as bytes. Joined to the header block, a string body is copied
// into one new string on every send, and node copies that again to write it: for the list of
// 10,000 users (300 KB) that was a large-object allocation per request and 6 times the CPU of
// sending the bytes as they are.
const MAX_STRING_BODY = 8 * 1024;

/** An answer made once and sent many times (verify's 200 for a user, a fixed refusal): see prepareAnswer. */
export interface PreparedAnswer {
  readonly status: number;
  readonly headers: Readonly<OutgoingHttpHeaders>;
  /** ASCII JSON as a string (one chunk with the headers), anything else as its UTF-8 bytes. */
  readonly body: string | Buffer;
}

/**
 * Builds an answer's headers and body once, for an answer sent many times: each send then makes
 * no object and measures nothing. node only reads the headers object it is given, so one frozen
 * object serves every send.
 */
export function prepareAnswer(status: number, json: string, headers?: Readonly<Record<string, string | string[]>>): PreparedAnswer {
  const body = bodyOf(json);
  return Object.freeze({ status, headers: Object.freeze(answerHeaders(body, headers)), body });
}

export function sendPrepared(res: ServerResponse, answer: PreparedAnswer): void {
  res.writeHead(answer.status, answer.headers);
  endWith(res, answer.body);
}

/** Small ASCII text stays a string (sent in one chunk with the headers); anything else becomes its UTF-8 bytes. */
function bodyOf(json: string): string | Buffer {
  return json.length <= MAX_STRING_BODY && Buffer.byteLength(json) === json.length ? json : Buffer.from(json);
}

/** The headers of every JSON answer, plus `headers`. `body` is ASCII text or bytes. */
function answerHeaders(body: string | Buffer, headers: Readonly<Record<string, string | string[]>> | undefined): OutgoingHttpHeaders {
  // Every answer is about accounts and sessions: never cached, never sniffed. A fresh literal,
  // not `{ ...COMMON, 'content-length': n }`: on Node 20 (V8 11.3) objects made by a spread
  // followed by another property are promoted out of the young generation in bulk, so under
  // load the old generation filled with answer headers (a full GC about every second).
  // `{ ...all, ...headers }` does the same; Object.assign does not.
  const all: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': body.length,
  };
  return headers === undefined ? all : Object.assign(all, headers);
}

// Joined to the header block, a string would be encoded with it: UTF-8 would turn a header's
// latin1 byte (0x80-0xff) into two. So only ASCII reaches here as a string, written as latin1.
function endWith(res: ServerResponse, body: string | Buffer): void {
  if (typeof body === 'string') res.end(body, 'latin1');
  else res.end(body);
}

/** Sends a static asset whose headers (type, length, policies) were all built once at start-up. */
export function sendStatic(res: ServerResponse, status: number, body: Buffer, headers: Readonly<OutgoingHttpHeaders>): void {
  res.writeHead(status, headers);
  res.end(body);
}
