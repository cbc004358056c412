import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long and how much a closing connection keeps reading (and discarding) after its answer. */
export interface LingerLimits {
  /** Bytes discarded at most; one more and the connection is cut. */
  readonly maxBytes: number;
  /** Cut when the client has sent nothing for this long. */
  readonly idleMs: number;
  /** Cut this long after lingering began, whatever the client does. */
  readonly totalMs: number;
}

/**
 * 16 MiB lets a client that uploads a 10 MB file before it looks at the answer (curl with a
 * file, most HTTP libraries) finish and read its 413; 2 s of silence or 5 s in all is more than
 * any client still sending on purpose needs. nginx lingers the same way (lingering_timeout 5 s,
 * lingering_time 30 s); ours is shorter because every answer here is a few hundred bytes.
 */
export const LINGER_LIMITS: LingerLimits = Object.freeze({ maxBytes: 16 * 1024 * 1024, idleMs: 2_000, totalMs: 5_000 });

const lingering = new WeakSet<Socket>();

/**
 * Closes the connection of `req` gracefully once the answer being written on it is sent, while
 * the client may still be sending a body we will not read: stops parsing, sends FIN after the
 * answer, reads and discards whatever arrives within `limits`, then destroys the socket (at once
 * when the client closes its side). Without this the socket is destroyed while bytes are still
 * arriving, the kernel answers them with a reset, and most clients lose the answer unread
 * (EPIPE, ECONNRESET). Call it before the answer is written; again for the same socket, it
 * does nothing.
 */
export function lingerBeforeClose(req: IncomingMessage, limits: LingerLimits = LINGER_LIMITS): void {
  const { socket } = req;
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  let discarded = 0;
  const cut = (): void => {
    socket.destroy();
  };
  const idle = setTimeout(cut, limits.idleMs);
  const total = setTimeout(cut, limits.totalMs);
  const discard = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > limits.maxBytes) cut();
    else idle.refresh();
  };
  // Until parsing stops, what the parser still hands the request is dropped; a request no one
  // reads would otherwise pause the socket (node:http restarts it through this same call).
  req.resume();
  // We may be called while the parser is in the middle of a buffer (an async handler's error
  // settles before it returns), and a paused socket is restarted on the next tick: stop parsing
  // once both are behind us.
  setImmediate(stopParsing, socket, discard);
  // node:http ends a `Connection: close` answer with destroySoon(): end(), then destroy() as
  // soon as the answer is flushed, with the client's bytes still arriving. On this socket it
  // only ends; the limits above (or the client's own close) destroy it.
  socket.destroySoon = endOnly;
  socket.once('close', () => {
    clearTimeout(idle);
    clearTimeout(total);
  });
}

/**
 * True once the connection is closing with a linger. The parser may already have handed a
 * request that was pipelined behind the refused one (it arrived in the same read); such a
 * request must be dropped, never served: its client was told the connection closes.
 */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

function stopParsing(socket: Socket, discard: (chunk: Buffer) => void): void {
  if (socket.destroyed) return;
  // node:http's parser reads the socket itself until someone listens for 'data'; from then on
  // (as when a connection is upgraded) it is fed by a 'data' listener of its own. Removing that
  // listener stops parsing: nothing read after this is taken for a request (what the parser had
  // already handed over is dropped by the app: isLingering).
  const parserFeeds = socket.listeners('data') as Array<(chunk: Buffer) => void>;
  socket.on('data', discard);
  for (const feed of parserFeeds) socket.removeListener('data', feed);
  socket.resume();
}

function endOnly(this: Socket): void {
  if (this.writable) this.end();
}
