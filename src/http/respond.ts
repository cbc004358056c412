import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

type ExtraHeaders = Readonly<Record<string, string | string[]>>;

/** RFC 6749 section 5.1: an OAuth answer, error or not, is never stored by a cache, nor by an HTTP/1.0 one. */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store', pragma: 'no-cache' });

/** Serializes `body` and sends it; with sendRawJson and sendPrepared, the only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: ExtraHeaders): void {
  sendRawJson(res, status, JSON.stringify(body), headers);
}

/** Sends text that already is JSON (or its bytes). */
export function sendRawJson(res: ServerResponse, status: number, json: string | Buffer, headers?: ExtraHeaders): void {
  const body = typeof json === 'string' ? bodyOf(json) : json;
  res.writeHead(status, answerHeaders(body, headers));
  endWith(res, body);
}

// Joined to the header block, a string body is copied again on every send: for the list of 10,000
// users (300 KB) that was 6 times the CPU of sending bytes, so a larger body is sent as bytes.
const MAX_STRING_BODY = 8 * 1024;

/** An answer made once and sent many times (verify's 200 for a user, a fixed refusal). */
export type PreparedAnswer = ReturnType<typeof prepareAnswer>;

/** Builds an answer's headers and body once; node only reads the headers object, so one frozen object serves every send. */
export function prepareAnswer(status: number, json: string, headers?: ExtraHeaders) {
  const body = bodyOf(json);
  return Object.freeze({ status, headers: Object.freeze(answerHeaders(body, headers)), body });
}

export function sendPrepared(res: ServerResponse, answer: PreparedAnswer): void {
  res.writeHead(answer.status, answer.headers);
  endWith(res, answer.body);
}

/**
 * Small ASCII text stays a string: node sends it in one chunk with the header block (a Buffer is
 * a second chunk of a writev), about 5% less CPU per answer. Anything else becomes its UTF-8 bytes.
 */
function bodyOf(json: string): string | Buffer {
  return json.length <= MAX_STRING_BODY && Buffer.byteLength(json) === json.length ? json : Buffer.from(json);
}

function answerHeaders(body: string | Buffer, headers: ExtraHeaders | undefined): OutgoingHttpHeaders {
  // Every answer is about accounts and sessions: never cached, never sniffed. A fresh literal and
  // Object.assign, never a spread: on Node 20 objects made by a spread are promoted out of the young
  // generation in bulk, and under load the old generation filled with answer headers.
  const all: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': body.length,
  };
  return headers === undefined ? all : Object.assign(all, headers);
}

// A string is encoded with the header block: as UTF-8 a header's latin1 byte (0x80-0xff) would
// become two, so only ASCII reaches here as a string, written as latin1.
function endWith(res: ServerResponse, body: string | Buffer): void {
  if (typeof body === 'string') res.end(body, 'latin1');
  else res.end(body);
}

/** Sends a static asset whose headers (type, length, policies) were all built once at start-up. */
export function sendStatic(
  res: ServerResponse, status: number, body: Buffer, headers: Readonly<OutgoingHttpHeaders>,
): void {
  res.writeHead(status, headers);
  res.end(body);
}
