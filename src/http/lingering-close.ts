import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long and how much a closing connection keeps reading and discarding after its answer: bytes at
 * most (one more and it is cut), silence at most, time in all. 16 MiB lets a client that uploads a
 * 10 MB file before it looks at the answer (curl, most HTTP libraries) read its 413. nginx lingers
 * the same way, longer: every answer here is a few hundred bytes.
 */
export type LingerLimits = Readonly<Record<'maxBytes' | 'idleMs' | 'totalMs', number>>;
export const LINGER_LIMITS: LingerLimits = Object.freeze({ maxBytes: 16 * 1024 * 1024, idleMs: 2_000, totalMs: 5_000 });

const lingering = new WeakSet<Socket>();

/**
 * Closes the connection of `req` once the answer being written is sent, while the client may still
 * be sending a body we will not read: a socket destroyed with bytes arriving answers them with a
 * reset, and most clients lose the answer unread. Stops parsing, ends after the answer, discards
 * what arrives within `limits`, then destroys the socket. Call it before the answer; once per socket.
 */
export function lingerBeforeClose(req: IncomingMessage, limits: LingerLimits = LINGER_LIMITS): void {
  const { socket } = req;
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  let discarded = 0;
  const cut = (): Socket => socket.destroy();
  const idle = setTimeout(cut, limits.idleMs);
  const total = setTimeout(cut, limits.totalMs);
  const discard = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > limits.maxBytes) cut();
    else idle.refresh();
  };
  // An unread request would pause the socket (node:http restarts it through this same call).
  req.resume();
  // We may be called mid-buffer (an async handler's error settles before the parser returns), and
  // the socket restarts on the next tick: stop parsing once both are behind us.
  setImmediate(stopParsing, socket, discard);
  // node:http ends a `Connection: close` answer with destroySoon(); here it only ends.
  socket.destroySoon = endOnly;
  socket.once('close', () => {
    clearTimeout(idle);
    clearTimeout(total);
  });
}

/** True once the connection closes with a linger: a request pipelined behind the refused one is dropped, never served. */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

// Once someone listens for 'data', node:http's parser is fed by a 'data' listener of its own (as
// for an upgrade): removing it stops parsing.
function stopParsing(socket: Socket, discard: (chunk: Buffer) => void): void {
  if (socket.destroyed) return;
  const parserFeeds = socket.listeners('data') as Array<(chunk: Buffer) => void>;
  socket.on('data', discard);
  for (const feed of parserFeeds) socket.removeListener('data', feed);
  socket.resume();
}

function endOnly(this: Socket): void {
  if (this.writable) this.end();
}
