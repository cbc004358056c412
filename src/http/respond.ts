import type { ServerResponse } from 'node:http';

// Every answer is about accounts and sessions: never cached, never sniffed.
const COMMON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/** The only writer of status, headers and body. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string | string[]>>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
