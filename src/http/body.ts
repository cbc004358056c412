import type { IncomingMessage } from 'node:http';
import { BodyTooLarge, ClientAborted, InvalidJson, UnsupportedMediaType } from '../errors.js';
import { decodeUtf8Strict } from '../validate/utf8.js';

export const MAX_JSON_DEPTH = 32;

/** The media type without parameters, lower-cased; only `charset` may follow application/json. */
export function isJsonContentType(header: string): boolean {
  const [mediaType = '', ...parameters] = header.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name = '', value = ''] = parameter.split('=');
    return name.trim().toLowerCase() === 'charset' && /^"?utf-8"?$/i.test(value.trim());
  });
}

/** True when the request announces a body: a Content-Length other than 0, or any Transfer-Encoding. */
export function announcesBody(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return true;
  const declaredLength = headers['content-length'];
  return declaredLength !== undefined && declaredLength !== '0';
}

/** True when the request's Content-Length is above `maxBytes` (node:http has already checked it is a number). */
export function isDeclaredTooLarge(req: IncomingMessage, maxBytes: number): boolean {
  const declaredLength = req.headers['content-length'];
  return declaredLength !== undefined && Number(declaredLength) > maxBytes;
}

/**
 * Reads a JSON body of at most `maxBytes`. No body at all reads as undefined. Throws
 * UnsupportedMediaType (a form or text body could be a cross-site request: login CSRF),
 * BodyTooLarge (as soon as the cap is crossed, without reading further), or InvalidJson
 * (syntax, prototype keys, nesting deeper than MAX_JSON_DEPTH).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  if (!announcesBody(req)) return undefined;
  const contentType = req.headers['content-type'];
  if (contentType === undefined || !isJsonContentType(contentType)) throw new UnsupportedMediaType();
  const chunks: Buffer[] = [];
  const received = await receiveBody(req, maxBytes, chunks);
  const text = decodeUtf8Strict(Buffer.concat(chunks, received));
  // Invalid UTF-8 is refused rather than silently turned into U+FFFD (which could merge two usernames).
  if (text === undefined) throw new InvalidJson('The body is not valid UTF-8.');
  return parseJson(text);
}

/**
 * Reads the body to its end, keeping its chunks in `chunks` when given; resolves with the byte count.
 * Throws BodyTooLarge (declared, or as soon as `maxBytes` is crossed, reading no further) or ClientAborted.
 */
export function receiveBody(req: IncomingMessage, maxBytes: number, chunks?: Buffer[]): Promise<number> {
  if (isDeclaredTooLarge(req, maxBytes)) return Promise.reject(new BodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    let received = 0;
    const settle = (error: Error | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      if (error === undefined) resolve(received);
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= maxBytes) {
        chunks?.push(chunk);
        return;
      }
      // Stop reading at once; the error answer closes the connection (http/body-policy.ts).
      req.pause();
      settle(new BodyTooLarge(maxBytes));
    };
    const onEnd = (): void => settle(undefined);
    const onAbort = (): void => settle(new ClientAborted());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/** JSON.parse, then refuses `__proto__` and `constructor.prototype` keys and deep nesting. */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidJson();
  }
  refuseForbidden(value, 0);
  return value;
}

function refuseForbidden(node: unknown, depth: number): void {
  if (typeof node !== 'object' || node === null) return;
  if (depth >= MAX_JSON_DEPTH) throw new InvalidJson('The body is nested too deeply.');
  const entries = Object.entries(node);
  for (const [key, value] of entries) {
    const isPrototype = key === 'constructor' && value instanceof Object && Object.hasOwn(value, 'prototype');
    if (key === '__proto__' || isPrototype) throw new InvalidJson('The body contains a forbidden key.');
  }
  // Last to first: a body with two faults keeps the message it always had.
  for (let i = entries.length - 1; i >= 0; i -= 1) refuseForbidden(entries[i]?.[1], depth + 1);
}
