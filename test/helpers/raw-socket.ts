import { connect } from 'node:net';

export interface RawResponse {
  /** The status of the first response, when one arrived. */
  readonly status: number | undefined;
  readonly statusLine: string;
  /** The first response's headers, names lower-cased. */
  readonly headers: Record<string, string>;
  /** What follows the first response's head. */
  readonly body: string;
  /** Everything received. */
  readonly text: string;
  /** The socket error, if the connection failed before anything was read. */
  readonly error: string | undefined;
  /** True when the server closed the connection (rather than the test giving up waiting). */
  readonly closedByServer: boolean;
}

/**
 * Writes `data` to a fresh TCP connection exactly as given (requests node:http would not send
 * as written) and collects everything until the server closes it (send `Connection: close`) or
 * `timeoutMs` passes. Never rejects: a failed connection is reported in `error`.
 */
export function rawExchange(port: number, data: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let closedByServer = false;
    let isDone = false;
    const finish = (): void => {
      if (isDone) return;
      isDone = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseRawResponse(Buffer.concat(chunks).toString('utf8')), error, closedByServer });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      closedByServer = true;
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      // A reset after the answer was read still counts as the server closing.
      if (e.code === 'ECONNRESET' && chunks.length > 0) closedByServer = true;
      else error = e.code ?? e.message;
    });
    socket.on('close', finish);
    socket.write(data);
  });
}

export interface UploadResult extends RawResponse {
  /** Body bytes the client managed to hand to its socket. */
  readonly bytesWritten: number;
  /** The error that stopped the upload (EPIPE, ECONNRESET), if it was stopped. */
  readonly writeError: string | undefined;
}

/**
 * Like a client that uploads a whole file before looking at the answer: writes `head`, then
 * `bodyBytes` bytes of `fill` (honouring back-pressure), reading nothing until every byte is
 * written or writing fails; then collects what the server sent until it closes or `timeoutMs`.
 */
export function uploadThenRead(port: number, head: string, bodyBytes: number, options: { fill?: number; timeoutMs?: number } = {}): Promise<UploadResult> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const chunks: Buffer[] = [];
    let bytesWritten = 0;
    let writeError: string | undefined;
    let readError: string | undefined;
    let isWriting = true;
    let closedByServer = false;
    let isDone = false;
    const chunk = Buffer.alloc(64 * 1024, options.fill ?? 0x20);
    const finish = (): void => {
      if (isDone) return;
      isDone = true;
      clearTimeout(timer);
      socket.destroy();
      const response = parseRawResponse(Buffer.concat(chunks).toString('utf8'));
      resolve({ ...response, error: readError, closedByServer, bytesWritten, writeError });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 20_000);
    socket.on('data', (data: Buffer) => chunks.push(data));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (isWriting) writeError = e.code ?? e.message;
      else readError = e.code ?? e.message;
      finish();
    });
    socket.on('close', finish);
    const startReading = (): void => {
      isWriting = false;
      socket.resume();
    };
    const pump = (): void => {
      while (bytesWritten < bodyBytes && !socket.destroyed) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bodyBytes - bytesWritten));
        bytesWritten += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
      // Every byte is with the kernel once this callback runs: only then look at the answer.
      if (!socket.destroyed) socket.write('', startReading);
    };
    socket.write(head);
    pump();
  });
}

function parseRawResponse(text: string): Omit<RawResponse, 'error' | 'closedByServer'> {
  const headEnd = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = (headEnd < 0 ? text : text.slice(0, headEnd)).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  return { status: match === null ? undefined : Number(match[1]), statusLine, headers, body: headEnd < 0 ? '' : text.slice(headEnd + 4), text };
}

/** A TCP connection a test writes to in steps, watching what comes back and whether the server closes it. */
export interface RawConnection {
  write(data: string | Buffer): Promise<void>;
  /** Everything received so far. */
  text(): string;
  /** Resolves once `predicate` holds for what was received, or with false after `timeoutMs`. */
  waitFor(predicate: (text: string) => boolean, timeoutMs?: number): Promise<boolean>;
  /** Resolves with true once the server has closed (FIN or reset), false after `timeoutMs`. */
  waitForClose(timeoutMs?: number): Promise<boolean>;
  /** The first socket error, if any. */
  error(): string | undefined;
  destroy(): void;
}

export function openRawConnection(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let isClosed = false;
    let firstError: string | undefined;
    const watchers = new Set<() => void>();
    const notify = (): void => {
      for (const watcher of [...watchers]) watcher();
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      notify();
    });
    socket.on('end', () => {
      isClosed = true;
      notify();
    });
    socket.on('close', () => {
      isClosed = true;
      notify();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      firstError ??= e.code ?? e.message;
    });
    const until = (predicate: () => boolean, timeoutMs: number): Promise<boolean> =>
      new Promise((done) => {
        if (predicate()) {
          done(true);
          return;
        }
        const watcher = (): void => {
          if (!predicate()) return;
          watchers.delete(watcher);
          clearTimeout(timer);
          done(true);
        };
        const timer = setTimeout(() => {
          watchers.delete(watcher);
          done(predicate());
        }, timeoutMs);
        watchers.add(watcher);
      });
    socket.once('connect', () =>
      resolve({
        write: (data) => new Promise((done) => socket.write(data, () => done())),
        text: () => received,
        waitFor: (predicate, timeoutMs = 5_000) => until(() => predicate(received), timeoutMs),
        waitForClose: (timeoutMs = 10_000) => until(() => isClosed, timeoutMs),
        error: () => firstError,
        destroy: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

/** The status codes of every response head in `text`, in order. */
export function statusesIn(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}
