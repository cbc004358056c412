// Drives headless Chromium over --remote-debugging-pipe with no npm package: the DevTools protocol
// as NUL-separated JSON, commands written to the browser's fd 3, replies and events read from its
// fd 4. One browser per launch, a fresh profile in a temp dir, every wait bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** How long one protocol command may take before the call rejects. */
const COMMAND_TIMEOUT_MS = 15_000;
/** How long the browser may take to answer its first command. */
const LAUNCH_TIMEOUT_MS = 30_000;

type Json = Record<string, unknown>;

interface Pending {
  readonly method: string;
  resolve(result: Json): void;
  reject(error: Error): void;
  readonly timer: NodeJS.Timeout;
}

/** A request the tab made, as answerRequests saw it. */
export interface SeenRequest {
  readonly url: string;
  readonly method: string;
  /** The body, for a request that has one. */
  readonly postData: string | undefined;
  /** Document, Script, Fetch, XHR, Image… */
  readonly resourceType: string;
  /** Its headers as the page set them, names as given. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A response answerRequests gives instead of the network's; status 0: the connection is refused. */
export interface CannedResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | number>>;
  readonly body: string | Buffer;
}

/** Something the page reported that a test may want to assert is absent: an error, a CSP violation. */
export interface PageProblem {
  readonly source: string;
  readonly text: string;
}

export class Chromium {
  readonly #child: ChildProcess;
  readonly #commands: Writable;
  readonly #profileDir: string;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(method: string, params: Json, sessionId: string | undefined) => void>();
  #nextId = 1;
  #exited = false;
  readonly #exit: Promise<void>;
  #stderr = '';

  private constructor(child: ChildProcess, commands: Writable, replies: Readable, profileDir: string) {
    this.#child = child;
    this.#commands = commands;
    this.#profileDir = profileDir;
    let buffered = Buffer.alloc(0);
    replies.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let end = buffered.indexOf(0); end !== -1; end = buffered.indexOf(0)) {
        const text = buffered.subarray(0, end).toString('utf8');
        buffered = buffered.subarray(end + 1);
        this.#receive(text);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-8_000);
    });
    this.#exit = new Promise<void>((resolve) => {
      child.once('close', () => {
        this.#exited = true;
        for (const pending of this.#pending.values()) {
          clearTimeout(pending.timer);
          pending.reject(new Error(`chromium exited before answering ${pending.method}\n${this.#stderr}`));
        }
        this.#pending.clear();
        resolve();
      });
    });
  }

  /**
   * Starts the browser; throws (never skips) when it is missing or does not answer.
   * `hostsToLoopback`: more host names (patterns such as `*.example.com`) that resolve to 127.0.0.1.
   * `secureOrigins`: plain-http origins the browser treats as secure contexts, as it would the same
   * site over https (Fetch Metadata, `Sec-Fetch-Site`, is sent only to those).
   */
  static async launch(options: { readonly hostsToLoopback?: readonly string[]; readonly secureOrigins?: readonly string[] } = {}): Promise<Chromium> {
    if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install the Debian package chromium`);
    const profileDir = await mkdtemp(join(tmpdir(), 'gatehouse-chromium-'));
    const child = spawn(
      CHROMIUM_PATH,
      [
        '--headless',
        '--no-sandbox', // the tests run as root, where the sandbox refuses to start
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
        // Loopback only: any other host name fails to resolve, so a wrong redirect cannot leave the
        // machine. gatehouse.test is 127.0.0.1 under a name: plain http to it is not a secure
        // context (as a LAN name is not), where localhost and 127.0.0.1 are.
        `--host-resolver-rules=MAP gatehouse.test 127.0.0.1, ${(options.hostsToLoopback ?? []).map((host) => `MAP ${host} 127.0.0.1, `).join('')}MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost`,
        ...(options.secureOrigins === undefined ? [] : [`--unsafely-treat-insecure-origin-as-secure=${options.secureOrigins.join(',')}`]),
        `--user-data-dir=${profileDir}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], env: { ...process.env, HOME: profileDir } },
    );
    const commands = child.stdio[3];
    const replies = child.stdio[4];
    if (commands === null || commands === undefined || replies === null || replies === undefined || !('write' in commands) || !('on' in replies)) {
      child.kill('SIGKILL');
      throw new Error('chromium was started without pipes on fd 3 and 4');
    }
    child.stdout?.resume();
    const browser = new Chromium(child, commands as Writable, replies as Readable, profileDir);
    child.once('error', () => undefined); // reported through the first command failing
    try {
      await browser.send('Browser.getVersion', {}, undefined, LAUNCH_TIMEOUT_MS);
    } catch (error) {
      await browser.close();
      throw error;
    }
    return browser;
  }

  #receive(text: string): void {
    let message: Json;
    try {
      message = JSON.parse(text) as Json;
    } catch {
      return;
    }
    const id = message['id'];
    if (typeof id === 'number') {
      const pending = this.#pending.get(id);
      if (pending === undefined) return;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      const error = message['error'] as Json | undefined;
      if (error !== undefined) pending.reject(new Error(`${pending.method}: ${String(error['message'])}`));
      else pending.resolve((message['result'] as Json | undefined) ?? {});
      return;
    }
    const method = message['method'];
    if (typeof method !== 'string') return;
    const sessionId = typeof message['sessionId'] === 'string' ? message['sessionId'] : undefined;
    const params = (message['params'] as Json | undefined) ?? {};
    for (const listener of [...this.#listeners]) listener(method, params, sessionId);
  }

  /** Sends one protocol command (to a page when `sessionId` is given) and resolves with its result. */
  send(method: string, params: Json = {}, sessionId?: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<Json> {
    if (this.#exited) return Promise.reject(new Error(`chromium has exited; cannot send ${method}\n${this.#stderr}`));
    const id = this.#nextId++;
    return new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${method} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { method, resolve, reject, timer });
      const message: Json = { id, method, params };
      if (sessionId !== undefined) message['sessionId'] = sessionId;
      this.#commands.write(`${JSON.stringify(message)}\0`);
    });
  }

  /** Subscribes to protocol events; returns the unsubscribe. */
  onEvent(listener: (method: string, params: Json, sessionId: string | undefined) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Opens a new tab in a browser context of its own (its own cookies, like a private window) and
   * attaches to it (flattened session), with Page, Runtime, Log and Audits enabled.
   */
  async newPage(): Promise<Page> {
    const { browserContextId } = await this.send('Target.createBrowserContext', { disposeOnDetach: true });
    if (typeof browserContextId !== 'string') throw new Error('Target.createBrowserContext answered without an id');
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank', browserContextId });
    if (typeof targetId !== 'string') throw new Error('Target.createTarget answered without a targetId');
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    if (typeof sessionId !== 'string') throw new Error('Target.attachToTarget answered without a sessionId');
    const page = new Page(this, targetId, sessionId, browserContextId);
    await page.enable();
    return page;
  }

  /** Browser.close, then SIGKILL if it lingers; removes the profile directory. Safe to call twice. */
  async close(): Promise<void> {
    if (!this.#exited) {
      await this.send('Browser.close', {}, undefined, 5_000).catch(() => undefined);
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
      await this.#exit;
      clearTimeout(timer);
    }
    await rm(this.#profileDir, { recursive: true, force: true, maxRetries: 3 });
  }
}

export class Page {
  readonly #browser: Chromium;
  readonly targetId: string;
  readonly sessionId: string;
  readonly browserContextId: string;
  /** Every error, exception and CSP violation the page has reported since it was opened. */
  readonly problems: PageProblem[] = [];
  /** Every main-frame URL navigated to, in order. */
  readonly navigations: string[] = [];

  constructor(browser: Chromium, targetId: string, sessionId: string, browserContextId: string) {
    this.#browser = browser;
    this.targetId = targetId;
    this.sessionId = sessionId;
    this.browserContextId = browserContextId;
    browser.onEvent((method, params, eventSessionId) => {
      if (eventSessionId !== sessionId) return;
      this.#record(method, params);
    });
  }

  #record(method: string, params: Json): void {
    if (method === 'Log.entryAdded') {
      const entry = params['entry'] as Json | undefined;
      if (entry !== undefined && (entry['level'] === 'error' || entry['source'] === 'security')) {
        this.problems.push({ source: `log:${String(entry['source'])}`, text: `${String(entry['text'])} ${String(entry['url'] ?? '')}` });
      }
    } else if (method === 'Runtime.exceptionThrown') {
      const details = params['exceptionDetails'] as Json | undefined;
      const exception = details?.['exception'] as Json | undefined;
      this.problems.push({ source: 'exception', text: String(exception?.['description'] ?? details?.['text']) });
    } else if (method === 'Runtime.consoleAPICalled' && (params['type'] === 'error' || params['type'] === 'assert')) {
      const args = (params['args'] as Json[] | undefined) ?? [];
      this.problems.push({ source: 'console', text: args.map((arg) => String(arg['value'] ?? arg['description'])).join(' ') });
    } else if (method === 'Audits.issueAdded') {
      const issue = params['issue'] as Json | undefined;
      if (issue?.['code'] === 'ContentSecurityPolicyIssue') this.problems.push({ source: 'csp', text: JSON.stringify(issue['details']) });
    } else if (method === 'Page.javascriptDialogOpening') {
      // An alert would block the page: record it and dismiss it.
      this.problems.push({ source: 'dialog', text: `${String(params['type'])}: ${String(params['message'])}` });
      void this.send('Page.handleJavaScriptDialog', { accept: false }).catch(() => undefined);
    } else if (method === 'Page.frameNavigated') {
      const frame = params['frame'] as Json | undefined;
      if (frame !== undefined && frame['parentId'] === undefined && typeof frame['url'] === 'string') this.navigations.push(frame['url']);
    }
  }

  async enable(): Promise<void> {
    for (const domain of ['Page', 'Runtime', 'Log', 'Audits']) await this.send(`${domain}.enable`);
  }

  send(method: string, params: Json = {}): Promise<Json> {
    return this.#browser.send(method, params, this.sessionId);
  }

  /** Starts a navigation; wait for its outcome with waitFor. Rejects when the browser reports a network error. */
  async navigate(url: string): Promise<void> {
    const result = await this.send('Page.navigate', { url });
    const errorText = result['errorText'];
    if (typeof errorText === 'string' && errorText !== '' && errorText !== 'net::ERR_ABORTED') throw new Error(`navigating to ${url}: ${errorText}`);
  }

  /** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
  async evaluate<T = unknown>(expression: string): Promise<T> {
    const result = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    const details = result['exceptionDetails'] as Json | undefined;
    if (details !== undefined) {
      const exception = details['exception'] as Json | undefined;
      throw new Error(`evaluate ${expression}: ${String(exception?.['description'] ?? details['text'])}`);
    }
    return (result['result'] as Json | undefined)?.['value'] as T;
  }

  /**
   * Polls `expression` until it is truthy and returns its value; a navigation in between (the
   * context destroyed) is retried. Rejects after `timeoutMs` with the page's URL and last error.
   */
  async waitFor<T = unknown>(expression: string, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    while (Date.now() < deadline) {
      try {
        const value = await this.evaluate<T>(expression);
        if (value) return value;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const href = await this.evaluate<string>('location.href').catch(() => '(unknown)');
    throw new Error(`waited ${timeoutMs} ms for ${expression} at ${href}${lastError === '' ? '' : `; last error: ${lastError}`}`);
  }

  /** Waits until the document at a URL for which `matches` is true has finished loading; returns that URL. */
  async waitForUrl(matches: (url: URL) => boolean, timeoutMs = 15_000): Promise<URL> {
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    while (Date.now() < deadline) {
      try {
        const href = await this.evaluate<string>(`document.readyState === 'complete' ? location.href : ''`);
        if (href !== '') {
          seen = href;
          const url = new URL(href);
          if (matches(url)) return url;
        }
      } catch {
        // the context was destroyed by a navigation: ask again
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no matching page within ${timeoutMs} ms; last loaded ${seen}; navigations: ${this.navigations.join(' -> ')}`);
  }

  /** Every request the tab made since answerRequests, in order. */
  readonly requests: SeenRequest[] = [];

  /**
   * From now on this tab's requests are answered here (the Fetch domain, before anything is sent):
   * `answer` gives the response, or undefined to let the request go on to the network. No DNS and no
   * TLS happen for an answered request, so a page can be served at https://any.name/ (a secure
   * context) from bytes a test holds. Every request is recorded in `requests`.
   */
  async answerRequests(answer: (request: SeenRequest) => CannedResponse | undefined): Promise<void> {
    this.#browser.onEvent((method, params, eventSessionId) => {
      if (eventSessionId !== this.sessionId || method !== 'Fetch.requestPaused') return;
      const request = params['request'] as Json;
      const seen: SeenRequest = {
        url: String(request['url']),
        method: String(request['method']),
        postData: typeof request['postData'] === 'string' ? request['postData'] : undefined,
        resourceType: String(params['resourceType']),
        headers: (request['headers'] as Record<string, string> | undefined) ?? {},
      };
      this.requests.push(seen);
      const response = answer(seen);
      const requestId = params['requestId'];
      const reply = response === undefined
        ? this.send('Fetch.continueRequest', { requestId })
        : response.status === 0 ? this.send('Fetch.failRequest', { requestId, errorReason: 'ConnectionRefused' }) : this.send('Fetch.fulfillRequest', {
          requestId,
          responseCode: response.status,
          responseHeaders: Object.entries(response.headers ?? {}).map(([name, value]) => ({ name, value: String(value) })),
          body: Buffer.from(response.body).toString('base64'),
        });
      void reply.catch(() => undefined); // the tab may have gone on or closed meanwhile
    });
    await this.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
  }

  /** Sets the viewport: `width` CSS pixels wide (a phone's when `isMobile`), then lets the page lay out again. */
  async setViewport(width: number, height: number, isMobile = false): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: isMobile });
  }

  /** A PNG of the whole page (beyond the viewport's height too). */
  async screenshot(): Promise<Buffer> {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    return Buffer.from(String(data), 'base64');
  }

  /**
   * Gives the page a DevTools virtual authenticator (WebAuthn.addVirtualAuthenticator): by
   * default a CTAP2 platform authenticator with resident keys and user verification, which
   * verifies the user and is touched automatically. Returns its id.
   */
  async addVirtualAuthenticator(options: Json = {}): Promise<string> {
    await this.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await this.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
        ...options,
      },
    });
    if (typeof authenticatorId !== 'string') throw new Error('WebAuthn.addVirtualAuthenticator answered without an id');
    return authenticatorId;
  }

  /** The credentials a virtual authenticator holds (id, rpId, userHandle, signCount, isResidentCredential). */
  async virtualCredentials(authenticatorId: string): Promise<Json[]> {
    const { credentials } = await this.send('WebAuthn.getCredentials', { authenticatorId });
    return credentials as Json[];
  }

  /**
   * A PNG of the whole page laid out at `width` CSS pixels (a phone when under 600), written to
   * `path`. The page is laid out again at that width first; the viewport is left at it.
   */
  async screenshotAt(path: string, width: number): Promise<void> {
    const isMobile = width < 600;
    const metrics = { width, height: isMobile ? 844 : 800 };
    await this.setViewport(metrics.width, metrics.height, isMobile);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const layout = await this.send('Page.getLayoutMetrics');
    const content = (layout['cssContentSize'] ?? layout['contentSize']) as { height: number } | undefined;
    const height = Math.max(metrics.height, Math.ceil(content?.height ?? metrics.height));
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width, height, scale: 1 } });
    if (typeof data !== 'string') throw new Error('Page.captureScreenshot answered without data');
    await writeFile(path, Buffer.from(data, 'base64'));
  }

  /** Closes the tab and its browser context (its cookies go with it). */
  async close(): Promise<void> {
    await this.#browser.send('Target.closeTarget', { targetId: this.targetId }).catch(() => undefined);
    await this.#browser.send('Target.disposeBrowserContext', { browserContextId: this.browserContextId }).catch(() => undefined);
  }

  /** Every cookie the browser would send to `url`. */
  async cookies(url: string): Promise<Array<{ name: string; value: string; httpOnly: boolean; sameSite?: string }>> {
    const { cookies } = await this.send('Network.getCookies', { urls: [url] });
    return cookies as Array<{ name: string; value: string; httpOnly: boolean; sameSite?: string }>;
  }
}
