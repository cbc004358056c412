// What the pages suite's tests share: a page as the server builds it, opened in Chromium at any
// origin, its API answered by the test through the Fetch domain (pages/sign-in.test.ts has its own,
// with the sign-in page's options).
import assert from 'node:assert/strict';
import type { BuiltPage } from '../../../src/pages/shell.js';
import type { Chromium, Page, SeenRequest } from '../../helpers/chromium.js';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}
/** Answers by path relative to the page ('../api/auth/join/check'); a list is used up in order. */
export type Answers = Record<string, Answer | Answer[]>;

export interface ServedPage {
  readonly page: Page;
  /** The API calls the page made, in order, with the path as the answers name it and the parsed body. */
  api(): Array<{ method: string; path: string; body: unknown }>;
  /** Waits until the page has made `count` API calls, then lets it draw. */
  calls(count: number): Promise<void>;
  hidden(id: string): Promise<boolean>;
  text(id: string): Promise<string>;
}

/** Opens `built` at `href`; an API path (under the site's /api/) is answered from `answers`, else 404. */
export async function openServed(browser: Chromium, built: BuiltPage, href: string, answers: Answers): Promise<ServedPage> {
  const page = await browser.newPage();
  const pageUrl = new URL(href);
  const lists = new Map(Object.entries(answers).map(([path, answer]) => [new URL(path, pageUrl).pathname, Array.isArray(answer) ? [...answer] : answer]));
  const isApi = (request: SeenRequest): boolean => new URL(request.url).pathname.startsWith('/api/');
  let isServed = false;
  await page.answerRequests((request) => {
    if (request.resourceType === 'Document' && !isServed) {
      isServed = true;
      return { status: 200, headers: built.headers as Record<string, string | number>, body: built.body };
    }
    if (!isApi(request)) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not here' };
    const listed = lists.get(new URL(request.url).pathname);
    const answer = (Array.isArray(listed) ? listed.shift() : listed) ?? { status: 404, body: { code: 'NOT_FOUND', message: 'There is nothing at this path.' } };
    return { status: answer.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer.body) };
  });
  await page.navigate(href);
  await page.waitFor(`document.readyState === 'complete'`);
  const relative = (url: string): string => {
    const path = new URL(url).pathname;
    return Object.keys(answers).find((name) => new URL(name, pageUrl).pathname === path) ?? path;
  };
  const api = () => page.requests.filter(isApi).map((request) => ({
    method: request.method,
    path: relative(request.url),
    body: request.postData === undefined ? undefined : JSON.parse(request.postData) as unknown,
  }));
  return {
    page,
    api,
    async calls(count) {
      const deadline = Date.now() + 10_000;
      while (api().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(api().length >= count, `the page made ${api().length} API calls, not ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    },
    hidden: (id) => page.evaluate<boolean>(`document.getElementById(${JSON.stringify(id)}).hidden`),
    text: (id) => page.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`),
  };
}

/** The page's problems, less the failed loads of the statuses a test provokes. */
export const problemsOf = (page: Page, statuses: readonly number[] = []): unknown[] =>
  page.problems.filter((problem) => !(problem.source === 'log:network' && statuses.some((status) => problem.text.includes(`status of ${status} `))));
