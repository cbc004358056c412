import type { ServerResponse } from 'node:http';

// Every answer is about accounts and sessions: never cached, never sniffed.
const COMMON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/** Serializes `body` and sends it; with sendRawJson, the only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string | string[]>>): void {
  sendRawJson(res, status, Buffer.from(JSON.stringify(body)), headers);
}

/** Sends bytes that already are JSON (a cached answer). */
export function sendRawJson(res: ServerResponse, status: number, json: Buffer, headers?: Readonly<Record<string, string | string[]>>): void {
  res.writeHead(status, headers === undefined ? { ...COMMON_HEADERS, 'content-length': json.length } : { ...COMMON_HEADERS, 'content-length': json.length, ...headers });
  res.end(json);
}
