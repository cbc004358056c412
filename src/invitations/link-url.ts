/** The pages a link opens, under `{base}/gatehouse/`. */
export type LinkPage = 'join' | 'reset';

/**
 * The link an administrator sends: `{pagesUrl}/gatehouse/{page}#{secret}`. The secret rides in the
 * fragment, which a browser never sends, so no proxy or app log sees it
 * (docs/contract/links-and-sessions.md "Invitations"). `pagesUrl` is where Gatehouse's pages are
 * reached, base included, without a trailing slash ('' for a path alone).
 */
export function linkUrl(pagesUrl: string, page: LinkPage, secret: string): string {
  return `${pagesUrl}/gatehouse/${page}#${secret}`;
}
