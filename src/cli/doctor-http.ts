import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One answer as the doctor keeps it: `json` is the body parsed, undefined when not JSON or cut at the cap. */
export interface Exchange {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly json: unknown;
}

interface ExchangeOptions {
  readonly method?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The whole exchange, connecting included. */
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  /** Requests to this origin go to `host`:`port` instead (Host and TLS server name still from the URL), as curl --connect-to. */
  readonly connectTo: { readonly origin: string; readonly host: string; readonly port: number } | undefined;
}

/** The request could not be made or did not finish: `message` says what happened, for a person. */
export class ExchangeFailed extends Error {}

/**
 * One request, no redirect followed, bounded in time and in what is read: the server checked may be anything, so
 * its answer is read up to `maxBodyBytes` and the connection then cut; node's header limit (16 KiB) bounds the head.
 */
export function exchange(url: URL, options: ExchangeOptions): Promise<Exchange> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new ExchangeFailed(`${url.protocol} is not http or https`));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { 'user-agent': 'gatehouse-doctor', ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    let isSettled = false;
    const settle = (error: Error | undefined, value?: Exchange): void => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      req.destroy();
      if (error !== undefined) reject(error);
      else if (value !== undefined) resolve(value);
    };
    const target = options.connectTo !== undefined && options.connectTo.origin === url.origin
      ? {
        host: options.connectTo.host,
        port: options.connectTo.port,
        path: `${url.pathname}${url.search}`,
        servername: url.hostname,
        headers: { host: url.host, ...headers },
      }
      : { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, path: `${url.pathname}${url.search}`, headers };
    const req = send({ ...target, protocol: url.protocol, method: options.method ?? 'GET', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (json: unknown): void =>
        settle(undefined, { status: res.statusCode ?? 0, headers: res.headers, json });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > options.maxBodyBytes) finish(undefined);
      });
      res.once('end', () => finish(jsonOf(Buffer.concat(chunks))));
      res.once('error', (error) => settle(new ExchangeFailed(`the answer broke off (${describe(error)})`)));
    });
    const timer = setTimeout(
      () => settle(new ExchangeFailed(`no whole answer within ${options.timeoutMs / 1000} s`)),
      options.timeoutMs,
    );
    // A 101 to a WebSocket upgrade: the doctor only needs to know one came; the connection is cut.
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      settle(undefined, { status: res.statusCode ?? 101, headers: res.headers, json: undefined });
    });
    req.once('error', (error) => settle(new ExchangeFailed(describe(error))));
    req.end(options.body);
  });
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === undefined ? error.message : `${code}: ${error.message}`;
}

function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
