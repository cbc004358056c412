/**
 * Where the login page sends the browser after a login: `rd` resolved against the page, when
 * it is http(s) on the page's own origin or on an allowed host (exact host name, any port) and
 * carries no user name or password; otherwise "/". The sign-in page's script (sign-in.entry.ts)
 * runs it; it uses nothing of the DOM's, so test/unit/redirect-target.test.ts runs it in Node too.
 */
export function safeRedirectTarget(rd: string | null, pageHref: string, allowedHosts: readonly string[]): string {
  if (typeof rd !== 'string' || rd === '') return '/';
  let target: URL;
  let page: URL;
  try {
    target = new URL(rd, pageHref);
    page = new URL(pageHref);
  } catch {
    return '/';
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return '/';
  if (target.username !== '' || target.password !== '') return '/';
  if (target.origin === page.origin || allowedHosts.indexOf(target.hostname) >= 0) return target.href;
  return '/';
}
