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
      const text = Buffer.concat(chunks).toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = (headEnd < 0 ? text : text.slice(0, headEnd)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
      resolve({ status: match === null ? undefined : Number(match[1]), statusLine, headers, body: headEnd < 0 ? '' : text.slice(headEnd + 4), text, error, closedByServer });
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
