/** docs/contract/links-and-sessions.md "Sessions": a session's `browser` is at most this long. */
export const MAX_BROWSER_NAME_LENGTH = 64;

const UNKNOWN = 'Unknown';
// Only this much of the header is looked at: the names below sit near its start, and a long
// header costs no more than a short one.
const MAX_AGENT_SCANNED = 512;

// Order matters: Edge, Opera and Samsung Internet also say Chrome and Safari; Chrome says Safari.
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

// iOS and Android before macOS and Linux: their agents also say "Mac OS X" and "Linux".
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\b(?:Macintosh|Mac OS X)\b/, 'macOS'],
  [/\bFreeBSD\b/, 'FreeBSD'],
  [/\bOpenBSD\b/, 'OpenBSD'],
  [/\bLinux\b/, 'Linux'],
];

// RFC 9110 section 5.6.2: the characters of a token, which a product name is.
const NOT_TOKEN = /[^!#$%&'*+.^_`|~0-9A-Za-z-]/g;

/**
 * A short name for the program behind a User-Agent header, for a person reading their sessions:
 * "Firefox on Linux", "Safari on iOS", else the header's first product name ("curl"), else
 * "Unknown". At most MAX_BROWSER_NAME_LENGTH characters of printable ASCII.
 */
export function browserNameOf(userAgent: string | undefined): string {
  if (userAgent === undefined) return UNKNOWN;
  const agent = userAgent.slice(0, MAX_AGENT_SCANNED);
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1];
  if (browser !== undefined) {
    const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
    return system === undefined ? browser : `${browser} on ${system}`;
  }
  const product = (agent.trimStart().split(/[/\s]/, 1)[0] ?? '').replace(NOT_TOKEN, '');
  return product === '' ? UNKNOWN : product.slice(0, MAX_BROWSER_NAME_LENGTH);
}
