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

/**
 * Reads a JSON body of at most `maxBytes`. No body at all reads as undefined. Throws
 * UnsupportedMediaType (a form or text body could be a cross-site request: login CSRF),
 * BodyTooLarge (as soon as the cap is crossed, without reading further), or InvalidJson
 * (syntax, prototype keys, nesting deeper than MAX_JSON_DEPTH).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declaredLength = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (declaredLength !== undefined && declaredLength !== '0');
  if (!hasBody) return undefined;
  const contentType = req.headers['content-type'];
  if (contentType === undefined || !isJsonContentType(contentType)) throw new UnsupportedMediaType();
  if (declaredLength !== undefined && Number(declaredLength) > maxBytes) throw new BodyTooLarge(maxBytes);

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
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
        // Stop reading at once; the error response closes the connection (app.ts).
        cleanup();
        req.pause();
        reject(new BodyTooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      try {
        resolve(parseJson(decodeUtf8(Buffer.concat(chunks, received))));
      } catch (error) {
        reject(error);
      }
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
