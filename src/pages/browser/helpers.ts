// What every page's script starts from: elements found by id with their type checked, messages and
// elements written as text (never HTML), JSON calls on relative paths, forms made busy.

/** The element with this id, of this kind; throws when the page has none (a page and its script disagree). */
export function byId<T extends HTMLElement = HTMLElement>(id: string, kind?: new () => T): T {
  const found = document.getElementById(id);
  const expected = kind ?? HTMLElement;
  if (!(found instanceof expected)) throw new Error(`the page has no ${expected.name} #${id}`);
  return found as T;
}

/** A control of a form that holds text: an input, a select or a text area. */
type TextField = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** The form's control named `name`; throws when the form has none. */
export function fieldOf(form: HTMLFormElement, name: string): TextField {
  const found = form.elements.namedItem(name);
  if (found instanceof HTMLInputElement || found instanceof HTMLSelectElement || found instanceof HTMLTextAreaElement) return found;
  throw new Error(`the form has no field ${name}`);
}

/** The form's checkbox named `name`. */
export function checkboxOf(form: HTMLFormElement, name: string): HTMLInputElement {
  const found = fieldOf(form, name);
  if (!(found instanceof HTMLInputElement)) throw new Error(`the form's ${name} is no checkbox`);
  return found;
}

/** The page's JSON data block (pages/shell.ts PageSpec.data), parsed; {} when it has none. */
export function pageData(): JsonObject {
  const block = document.getElementById('page-data');
  if (block === null) return {};
  const value: unknown = JSON.parse(block.textContent ?? '');
  return isObject(value) ? value : {};
}

/** How a message looks: a problem (''), a note, or done. */
type MessageKind = '' | 'note' | 'done';

/** Shows text (never HTML) in a message element; '' hides it. */
export function say(target: HTMLElement, text: string, kind: MessageKind = ''): void {
  target.textContent = text;
  target.className = kind !== '' ? `message ${kind}` : 'message';
  target.hidden = text === '';
}

/** Disables or enables a form's controls; null (a call made from a button) is left alone. */
export function setBusy(form: HTMLFormElement | null, busy: boolean): void {
  if (form === null) return;
  for (const control of Array.from(form.elements)) {
    if (control instanceof HTMLButtonElement || control instanceof HTMLInputElement || control instanceof HTMLSelectElement ||
      control instanceof HTMLTextAreaElement || control instanceof HTMLFieldSetElement) control.disabled = busy;
  }
}

/** Runs handler(form) instead of the browser's own submission of the form. */
export function onSubmit(form: HTMLFormElement, handler: (form: HTMLFormElement) => void): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    handler(form);
  });
}

/** A JSON object as parsed: its members still to be checked. */
export type JsonObject = { readonly [key: string]: unknown };

export const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The answer to a call: status 0 when the server could not be reached; body null when it was no JSON. */
export interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly body: unknown;
}

/** A JSON call on a relative path; resolves with the answer, never rejects. */
export function callApi(method: string, path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const init: RequestInit = { method, credentials: 'same-origin', cache: 'no-store', headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return fetch(path, init).then(
    (res) => res.json().catch(() => null).then((json: unknown) => ({ status: res.status, ok: res.ok, body: json })),
    () => ({ status: 0, ok: false, body: null }),
  );
}

/** callApi with the form (if any) busy until the answer is in. */
export function callBusy(form: HTMLFormElement | null, method: string, path: string, body?: unknown): Promise<Answer> {
  setBusy(form, true);
  return callApi(method, path, body).then((answer) => {
    setBusy(form, false);
    return answer;
  });
}

/** The body of a successful answer when it is a JSON object, else null. */
export function bodyOf(answer: Answer): JsonObject | null {
  return answer.ok && isObject(answer.body) ? answer.body : null;
}

/** The body of a successful answer when it is a JSON array, else null. */
export function listOf(answer: Answer): readonly unknown[] | null {
  return Array.isArray(answer.body) ? answer.body : null;
}

/** The sentence to show for a failed call: the server's message, else a generic one. */
export function problemOf(answer: Answer): string {
  if (answer.status === 0) return 'The server could not be reached.';
  const message = isObject(answer.body) ? answer.body['message'] : undefined;
  if (typeof message === 'string' && message !== '') return message;
  return `The request failed (${answer.status}).`;
}

/** The error code of a refusal, or ''. */
export function codeOf(answer: Answer): string {
  const code = isObject(answer.body) ? answer.body['code'] : undefined;
  return typeof code === 'string' ? code : '';
}

/** A new element with an optional class and text (as text, never HTML). */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined && className !== '') node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(text: string, className?: string, onClick?: (event: MouseEvent) => void): HTMLButtonElement {
  const node = element('button', className, text);
  node.type = 'button';
  if (onClick !== undefined) node.addEventListener('click', onClick);
  return node;
}

/** The button a click event came from. */
export const clickedButton = (event: Event): HTMLButtonElement | null => (event.target instanceof HTMLButtonElement ? event.target : null);
