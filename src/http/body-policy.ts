import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLarge } from '../errors.js';
import { announcesBody, discardBody, isDeclaredTooLarge } from './body.js';
import { LINGER_LIMITS, lingerBeforeClose, type LingerLimits } from './lingering-close.js';

/**
 * What a route does with a request body:
 * - `json`: its handler reads one with readJsonBody;
 * - `none`: it takes none. A body within the cap is read and dropped before the handler runs,
 *   so the connection can be kept; a body beyond it gets 413 (declared, or as soon as a chunked
 *   one crosses the cap) and the connection is closed. Never an unbounded drain.
 * - `ignored`: it never reads one and never answers 413 (the gate: nginx turns any status but
 *   2xx, 401 and 403 into a 500, and its auth subrequest may announce the original request's
 *   Content-Length without sending a body). The handler answers at once; when a body was
 *   announced the answer closes the connection.
 */
export type BodyUse = 'json' | 'none' | 'ignored';

export interface BodyPolicy {
  /**
   * Runs before the handler of a request that announces a body or expects 100-continue:
   * answers 100 Continue when the body will be read, throws BodyTooLarge when it will not be
   * (a declared length over the cap is refused before the client sends it), and returns a
   * promise to wait for when a `none` route's body is being dropped.
   */
  admit(use: BodyUse, req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> | undefined;
  /**
   * Called before an error answer is written: when part of the request's body has not arrived
   * (it would otherwise be parsed as the next request), arranges a lingering close and returns
   * true; the answer must then carry `Connection: close`. A request without a body, or whose
   * body was read to the end, keeps its connection.
   */
  closeIfBodyPending(req: IncomingMessage): boolean;
}

const CONNECTION_CLOSE = 'close';

export function createBodyPolicy(maxBodyBytes: number, lingerLimits: LingerLimits = LINGER_LIMITS): BodyPolicy {
  return {
    admit(use, req, res, expectsContinue) {
      const hasBody = announcesBody(req);
      if (use === 'ignored') {
        // No 100 Continue: the body is not wanted (node:http then closes by itself).
        if (hasBody) {
          res.setHeader('connection', CONNECTION_CLOSE);
          lingerBeforeClose(req, lingerLimits);
        }
        return undefined;
      }
      // A `json` route checks credentials before its body (spec section 5.7) and refuses an
      // oversized body when it reads it; with 100-continue the client waits for us, so now.
      if ((use === 'none' || expectsContinue) && isDeclaredTooLarge(req, maxBodyBytes)) throw new BodyTooLarge(maxBodyBytes);
      if (expectsContinue && hasBody) res.writeContinue();
      return use === 'none' && hasBody ? discardBody(req, maxBodyBytes) : undefined;
    },
    closeIfBodyPending(req) {
      if (req.complete || !announcesBody(req)) return false;
      lingerBeforeClose(req, lingerLimits);
      return true;
    },
  };
}
