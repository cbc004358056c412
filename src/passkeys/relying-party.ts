import { splitHostPort } from '../http/host-header.js';
import { normalizeHostName } from '../validate/host-name.js';

/** Who we are to an authenticator for one request (docs/contract/accounts.md "Passkeys"). */
export interface RelyingParty {
  readonly id: string;
  readonly isOriginAllowed: (origin: string) => boolean;
}

/** Where passkeys are used, settled once at start-up from the settings. */
export interface RelyingParties {
  /** Why passkeys are off (a sentence for the start-up log), or undefined when they are on. */
  readonly offReason: string | undefined;
  /** Origins listed in the settings that can never be used, each as a sentence for the start-up log. */
  readonly ignoredOrigins: readonly string[];
  /** The relying party of a request whose browser used `host`; undefined when off or `host` is no host name. */
  forHost(host: string | undefined): RelyingParty | undefined;
}

export interface RelyingPartySettings {
  readonly cookieDomain: string | undefined;
  /** --public-url as config.ts writes it: an origin, then the base path. */
  readonly publicUrl: string | undefined;
  /** --passkey-origins, each as URL.origin writes it. */
  readonly passkeyOrigins: readonly string[];
}

// For trying it out: browsers treat these as secure contexts over plain HTTP.
const LOCAL_ORIGIN = /^http:\/\/(?:localhost|127\.0\.0\.1)(?::\d{1,5})?$/;

/**
 * Without --cookie-domain, rp.id is the host the browser used and the origin `https://` that host
 * (relyingPartyForHost). With it (docs/contract/access.md "Passkeys with --cookie-domain"), rp.id is
 * the cookie domain and
 * the origins allowed are --public-url's and --passkey-origins, never one taken from `Host`: the
 * session cookie reaches every sub-domain, so a `Host` naming any of them must not choose the
 * origin. Listed origins outside the cookie domain are ignored (a browser uses an rp.id only on
 * that name or its sub-domains, WebAuthn sections 5.1.3 and 5.1.4.1); with none left, passkeys are off.
 */
export function relyingPartiesOf(settings: RelyingPartySettings): RelyingParties {
  const { cookieDomain } = settings;
  if (cookieDomain === undefined) {
    return { offReason: undefined, ignoredOrigins: [], forHost: relyingPartyForHost };
  }
  const listed = [
    ...(settings.publicUrl === undefined ? [] : [new URL(settings.publicUrl).origin]),
    ...settings.passkeyOrigins,
  ];
  const isWithin = (origin: string): boolean => {
    const host = new URL(origin).hostname;
    return host === cookieDomain || host.endsWith(`.${cookieDomain}`);
  };
  const origins = new Set(listed.filter(isWithin));
  const ignoredOrigins = [...new Set(listed.filter((origin) => !isWithin(origin)))].map(
    (origin) => `passkeys cannot be used from ${origin}: it is not under --cookie-domain ${cookieDomain}, so no browser signs for that rp.id there`,
  );
  if (origins.size === 0) {
    return {
      offReason: listed.length === 0
        ? `passkeys are off: with --cookie-domain ${cookieDomain}, set --public-url (the URL of Gatehouse's pages) or --passkey-origins to say where they are used`
        : `passkeys are off: no origin in --public-url or --passkey-origins is under --cookie-domain ${cookieDomain}`,
      ignoredOrigins,
      forHost: () => undefined,
    };
  }
  const relyingParty: RelyingParty = Object.freeze({ id: cookieDomain, isOriginAllowed: (origin: string) => origins.has(origin) });
  return { offReason: undefined, ignoredOrigins, forHost: () => relyingParty };
}

/**
 * The relying party for a request whose browser used `host` (`Host`, or `X-Forwarded-Host` from a
 * trusted proxy), or undefined when that is not a host name with an optional port. rp.id is that
 * host; the origin allowed is `https://` that host, its port kept unless it is 443, plus
 * http://localhost and http://127.0.0.1 on any port.
 */
export function relyingPartyForHost(host: string | undefined): RelyingParty | undefined {
  if (host === undefined) return undefined;
  const split = splitHostPort(host);
  if (split === undefined || split.isBracketed || split.port === '') return undefined;
  // A DNS name or an IPv4 literal (an IPv6 one was refused above, bracketed or not).
  const name = normalizeHostName(split.host);
  if (name === undefined) return undefined;
  const origin = split.port === undefined || split.port === '443' ? `https://${name}` : `https://${name}:${split.port}`;
  return {
    id: name,
    isOriginAllowed: (candidate) => candidate === origin || LOCAL_ORIGIN.test(candidate),
  };
}
