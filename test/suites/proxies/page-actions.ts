// What the browser tests of the proxies suite do in a page: fill and submit a form as a person
// does, click, read a message, and run a page's own script against the site it is on.
import type { Page } from '../../helpers/chromium.js';

/** Sets form fields by id and submits the form as a person does (its own submit handler runs). */
export async function submitForm(page: Page, formId: string, values: Record<string, string>): Promise<void> {
  await page.waitFor(`(() => { const form = document.getElementById(${JSON.stringify(formId)}); return form !== null && !form.hidden && form.offsetParent !== null; })()`);
  await page.evaluate(`(() => {
    const values = ${JSON.stringify(values)};
    for (const id of Object.keys(values)) document.getElementById(id).value = values[id];
    document.getElementById(${JSON.stringify(formId)}).requestSubmit();
    return true;
  })()`);
}

export const click = (page: Page, id: string): Promise<unknown> => page.evaluate(`(document.getElementById(${JSON.stringify(id)}).click(), true)`);

/** The text of a message element once it is shown. */
export const shownText = (page: Page, id: string): Promise<string> =>
  page.waitFor<string>(`(() => { const m = document.getElementById(${JSON.stringify(id)}); return m && !m.hidden && m.textContent !== '' ? m.textContent : ''; })()`);

/**
 * What the page's own script can do, run in the page (Runtime.evaluate: the page's origin, its
 * cookies, no user gesture): `tries` is a list of [label, expression giving a Promise].
 * Answers [label, outcome] where outcome is the status and body when the page may read it,
 * `opaque` for a no-cors answer, `loaded` for an image or a form in a frame, or `blocked: …` when
 * the browser refused.
 */
export async function runInPage(page: Page, tries: ReadonlyArray<readonly [string, string]>): Promise<Array<[string, string]>> {
  const body = tries.map(([label, expression]) => `await attempt(${JSON.stringify(label)}, () => ${expression});`).join('\n');
  return page.evaluate<Array<[string, string]>>(`(async () => {
    const outcomes = [];
    const attempt = async (label, run) => {
      try {
        const answer = await run();
        outcomes.push([label, answer instanceof Response ? (answer.type === 'opaque' ? 'opaque' : String(answer.status) + ' ' + (await answer.text())) : String(answer)]);
      } catch (error) {
        outcomes.push([label, 'blocked: ' + error.message]);
      }
    };
    const image = (url) => new Promise((resolve) => {
      const img = new Image();
      img.onload = img.onerror = () => resolve('loaded');
      img.src = url;
    });
    // A form posted into a frame of its own, as a page posts one without script.
    const form = (url, fields) => new Promise((resolve) => {
      const name = 'sink' + Math.random().toString(36).slice(2);
      const frame = document.createElement('iframe');
      frame.name = name;
      document.body.append(frame);
      // What the frame shows, when the page may read it (its own origin's answer).
      frame.onload = () => resolve('loaded ' + (frame.contentDocument?.body?.innerText ?? ''));
      const element = document.createElement('form');
      element.method = 'post';
      element.action = url;
      element.target = name;
      for (const [key, value] of Object.entries(fields)) {
        const input = document.createElement('input');
        input.name = key;
        input.value = value;
        element.append(input);
      }
      document.body.append(element);
      element.submit();
    });
    ${body}
    return outcomes;
  })()`);
}
