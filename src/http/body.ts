import type { IncomingMessage } from 'node:http';
import { BodyTooLarge, ClientAborted, InvalidJson, UnsupportedMediaType } from '../errors.js';
import { decodeUtf8Strict } from '../validate/utf8.js';

export const MAX_JSON_DEPTH = 32;

/** The media type without parameters, lower-cased; only `charset` may follow application/json. */
function isJsonContentType(header: string): boolean {
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
  if (isDeclaredTooLarge(req, maxBytes)) throw new BodyTooLarge(maxBytes);
  const chunks: Buffer[] = [];
  const received = await receive(req, maxBytes, chunks);
  return parseJson(decodeUtf8(Buffer.concat(chunks, received)));
}

/**
 * Reads a body no one wants to its end and drops it, never more than `maxBytes`. Throws
 * BodyTooLarge (declared, or as soon as the cap is crossed) or ClientAborted.
 */
export async function discardBody(req: IncomingMessage, maxBytes: number): Promise<void> {
  if (isDeclaredTooLarge(req, maxBytes)) throw new BodyTooLarge(maxBytes);
  await receive(req, maxBytes, undefined);
}

/** Reads the body to its end, keeping the chunks in `chunks` when given; resolves with the byte count. */
function receive(req: IncomingMessage, maxBytes: number, chunks: Buffer[] | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        // Stop reading at once; the error answer closes the connection (http/body-policy.ts).
        cleanup();
        req.pause();
        reject(new BodyTooLarge(maxBytes));
        return;
      }
      chunks?.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(received);
    };
    const onAbort = (): void => {
      cleanup();
      reject(new ClientAborted());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/** Invalid UTF-8 is refused rather than silently turned into U+FFFD (which could merge two usernames). */
function decodeUtf8(bytes: Buffer): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new InvalidJson('The body is not valid UTF-8.');
  return text;
}

/** JSON.parse, then refuses `__proto__` and `constructor.prototype` keys and deep nesting. */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidJson();
  }
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: node, depth } = stack.pop() ?? { value: null, depth: 0 };
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= MAX_JSON_DEPTH) throw new InvalidJson('The body is nested too deeply.');
    if (Array.isArray(node)) {
      for (const item of node) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (key === '__proto__') throw new InvalidJson('The body contains a forbidden key.');
      if (key === 'constructor' && typeof record[key] === 'object' && record[key] !== null && Object.hasOwn(record[key], 'prototype')) {
        throw new InvalidJson('The body contains a forbidden key.');
      }
      stack.push({ value: record[key], depth: depth + 1 });
    }
  }
  return value;
}
