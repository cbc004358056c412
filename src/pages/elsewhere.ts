// A page of the account surface ({base}/gatehouse/…) asked on an app's origin (docs/contract/own-origin.md
// "Refusals"): the judge refused it (NOT_GATEHOUSE_ORIGIN, before any credential), and a browser gets
// somewhere to go instead of JSON.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotGatehouseOrigin } from '../errors.js';
import { announcesBody } from '../http/body.js';
import { isVisibleAscii } from '../http/header-value.js';
import { sendStatic } from '../http/respond.js';
import { buildPage, escapeHtml, type Sha256Base64 } from './shell.js';

const EMPTY = Buffer.alloc(0);
// A query longer than this is left behind: what a page's own links carry is far shorter.
const MAX_QUERY_LENGTH = 4096;

/**
 * Answers a browser's navigation to an account page (GET or HEAD under {base}/gatehouse/, no body)
 * that the judge refused as not on Gatehouse's own origin, and returns true; anything else: false (a
 * request with a body is no navigation: it gets the JSON 403, and its connection closes).
 */
export type AccountPageElsewhere = (req: IncomingMessage, res: ServerResponse, path: string, error: unknown) => boolean;

/**
 * With --public-url: a 303 to the same path and query on it (the query dropped when it is long or not
 * plain ASCII, so the Location is always a valid header). Without: a 403 page, built once on the shell,
 * saying where accounts are managed.
 */
export function buildAccountPageElsewhere(options: {
  readonly publicUrl: string | undefined;
  readonly baseUri: string;
  readonly sha256Base64: Sha256Base64;
}): AccountPageElsewhere {
  const { publicUrl, baseUri } = options;
  const accountPages = `${baseUri}/gatehouse/`;
  const isRefusedPage = (req: IncomingMessage, path: string, error: unknown): boolean =>
    error instanceof NotGatehouseOrigin && (req.method === 'GET' || req.method === 'HEAD') && !announcesBody(req) &&
    path.startsWith(accountPages);
  if (publicUrl !== undefined) {
    return (req, res, path, error) => {
      if (!isRefusedPage(req, path, error)) return false;
      const url = req.url ?? '/';
      const queryStart = url.indexOf('?');
      const query = queryStart < 0 ? '' : url.slice(queryStart);
      const isQueryKept = query.length <= MAX_QUERY_LENGTH && isVisibleAscii(query);
      // The router matched the path to a page's own (ASCII) path under the base.
      sendStatic(res, 303, EMPTY, {
        location: `${publicUrl}${path.slice(baseUri.length)}${isQueryKept ? query : ''}`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-length': 0,
      });
      return true;
    };
  }
  const page = buildPage({
    title: 'Accounts are managed elsewhere',
    body: ELSEWHERE_BODY.replace('{account}', escapeHtml(`http://localhost:<port>${baseUri}/gatehouse/account`)),
  }, options.sha256Base64);
  return (req, res, path, error) => {
    if (!isRefusedPage(req, path, error)) return false;
    sendStatic(res, 403, page.body, page.headers);
    return true;
  };
}

const ELSEWHERE_BODY = `
<h1>Not on this site</h1>
<p>Your account and the users are managed on Gatehouse's own address only, never on an app's site: a script of an app could otherwise act with your powers.</p>
<p>Open it where Gatehouse runs, on that machine or through an SSH tunnel to it:</p>
<p><code>{account}</code></p>
<p class="muted">Administrators: set <code>--public-url</code> to Gatehouse's own address, and this link leads there.</p>
`;
