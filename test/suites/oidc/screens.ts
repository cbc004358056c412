// What the oidc suite's browser tests share: screenshots at desktop and phone width (kept in
// GATEHOUSE_SCREENSHOT_DIR when it is set, to be looked at), and the page problems that count.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page, PageProblem } from '../../helpers/chromium.js';

/** Lays the page out at desktop and phone width, checks it does not scroll sideways, and saves PNGs when asked to. */
export async function saveScreenshots(page: Page, name: string): Promise<void> {
  const directory = process.env['GATEHOUSE_SCREENSHOT_DIR'];
  for (const [label, width, height, isMobile] of [['desktop', 1280, 900, false], ['phone', 390, 844, true]] as const) {
    await page.setViewport(width, height, isMobile);
    await page.waitFor(`window.innerWidth === ${width}`);
    assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'), `${name}: no horizontal scroll at ${width}px`);
    const png = await page.screenshot();
    assert.ok(png.subarray(1, 4).toString('latin1') === 'PNG' && png.length > 1000, `${name}: a PNG at ${width}px`);
    if (directory !== undefined && directory !== '') await writeFile(join(directory, `${name}-${label}.png`), png);
  }
  await page.setViewport(1280, 900, false);
}

/** Errors, exceptions and CSP violations, less the sign-in page's verify while signed out and the statuses a test expects. */
export function unexpectedProblems(page: Page, allowedStatuses: readonly number[] = []): PageProblem[] {
  return page.problems.filter(
    (problem) =>
      !(problem.source === 'log:network' &&
        (/status of 401 .*\/api\/auth\/verify$/.test(problem.text) || allowedStatuses.some((status) => problem.text.includes(`status of ${status} `)))),
  );
}
