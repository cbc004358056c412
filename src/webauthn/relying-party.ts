import { splitHostPort } from '../http/host-header.js';
import { normalizeHostName } from '../validate/host-name.js';

/** Who we are to an authenticator for one request (INTERFACE.md "Signing in"). */
export interface RelyingParty {
  readonly id: string;
  readonly isOriginAllowed: (origin: string) => boolean;
}

// For trying it out: browsers treat these as secure contexts over plain HTTP.
const LOCAL_ORIGIN = /^http:\/\/(?:localhost|127\.0\.0\.1)(?::\d{1,5})?$/;

/**
 * The relying party for a request whose browser used `host` (`Host`, or `X-Forwarded-Host` from a
 * trusted proxy), or undefined when that is not a host name with an optional port. rp.id is
 * `--cookie-domain` when set, else that host; the origin allowed is `https://` that host, its port
 * kept unless it is 443, plus http://localhost and http://127.0.0.1 on any port.
 */
export function relyingPartyFor(host: string | undefined, cookieDomain: string | undefined): RelyingParty | undefined {
  if (host === undefined) return undefined;
  const split = splitHostPort(host);
  if (split === undefined || split.isBracketed || split.port === '') return undefined;
  // A DNS name or an IPv4 literal (an IPv6 one was refused above, bracketed or not).
  const name = normalizeHostName(split.host);
  if (name === undefined) return undefined;
  const origin = split.port === undefined || split.port === '443' ? `https://${name}` : `https://${name}:${split.port}`;
  return {
    id: cookieDomain ?? name,
    isOriginAllowed: (candidate) => candidate === origin || LOCAL_ORIGIN.test(candidate),
  };
}
