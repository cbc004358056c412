import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLarge } from '../errors.js';
import { announcesBody, isDeclaredTooLarge, receiveBody } from './body.js';
import { LINGER_LIMITS, lingerBeforeClose, type LingerLimits } from './lingering-close.js';

/**
 * What a route does with a request body:
 * - `json`: its handler reads one with readJsonBody;
 * - `form`: its handler reads an application/x-www-form-urlencoded one (OpenID Connect), as `json`;
 * - `none`: a body within the cap is read and dropped before the handler runs, so the connection
 *   is kept; beyond it (declared, or once a chunked one crosses it) 413 closes the connection.
 * - `ignored`: never read, never a 413 (the gate: nginx turns any status but 2xx, 401 and 403 into
 *   a 500, and its subrequest may announce a Content-Length it never sends); the answer closes.
 */
export type BodyUse = 'json' | 'form' | 'none' | 'ignored';

export function createBodyPolicy(maxBodyBytes: number, lingerLimits: LingerLimits = LINGER_LIMITS) {
  return {
    /**
     * Before the handler of a request with a body or 100-continue: sends 100 Continue when the body
     * will be read, refuses a declared length over the cap before it is sent, and returns the drop
     * of a `none` route's body to wait for.
     */
    admit(
      use: BodyUse, req: IncomingMessage, res: ServerResponse, expectsContinue: boolean,
    ): Promise<unknown> | undefined {
      const hasBody = announcesBody(req);
      if (use === 'ignored') {
        // No 100 Continue: the body is not wanted (node:http then closes by itself).
        if (hasBody) {
          res.setHeader('connection', 'close');
          lingerBeforeClose(req, lingerLimits);
        }
        return undefined;
      }
      // A `json` route checks credentials before its body (docs/contract/flood-api.md "Authentication",
      // rule 7) and refuses an oversized one when it reads it; with 100-continue the client waits for
      // us, so now.
      if ((use === 'none' || expectsContinue) && isDeclaredTooLarge(req, maxBodyBytes)) {
        throw new BodyTooLarge(maxBodyBytes);
      }
      if (expectsContinue && hasBody) res.writeContinue();
      return use === 'none' && hasBody ? receiveBody(req, maxBodyBytes) : undefined;
    },
    /**
     * Before an error answer: a body not read to its end would be parsed as the next request, so
     * this lingers and returns true; the answer must then carry `Connection: close`.
     */
    closeIfBodyPending(req: IncomingMessage): boolean {
      if (req.complete || !announcesBody(req)) return false;
      lingerBeforeClose(req, lingerLimits);
      return true;
    },
  };
}
