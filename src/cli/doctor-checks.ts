import { clientAddressOutcome } from './doctor-address.js';
import { API_ACCEPT, BROWSER_ACCEPT, type Ask, type Doctor } from './doctor-answers.js';
import { runProbeChecks } from './doctor-app.js';
import { anonymousOutcome, followToSignIn, gateOutcome, returnUrlOutcome } from './doctor-gate.js';
import { deepUrlOf, type SignIn } from './doctor-input.js';
import { longUrlOutcome } from './doctor-long-url.js';
import { accountApiOutcome, askOrigin, publicUrlOutcome, type OriginAsked } from './doctor-origin.js';
import { proxyKindOf } from './doctor-proxy.js';
import { fail, shown, skip, type Outcome, type Report } from './doctor-report.js';
import { credentialHeaders, signedInOutcome, signInAt, signOutOutcome, type Credential } from './doctor-session.js';

/** The checks in the order of the help; `other` is each further URL, checked for the gate alone. */
const CHECK_NAMES = [
  'gate', 'api', 'sign-in page', 'return URL', 'client address', 'cookie', 'signed in', 'probe',
  'forged headers', 'jwt cookie', 'forged URI', 'public URL', 'account API', 'long URL', 'sign-out',
] as const;
const NEEDS_ACCOUNT = ['signed in', 'probe', 'forged headers', 'jwt cookie', 'forged URI'] as const;

interface DoctorPlan {
  /** The URL checked in full. */
  readonly app: URL;
  /** Further URLs, each checked for the gate alone (a request and a WebSocket upgrade without a session). */
  readonly others: readonly URL[];
  readonly probePath: string;
  readonly signIn: SignIn | undefined;
  readonly machineToken: string | undefined;
}

/** Every check, each reported once (skipped, with the reason, when what it needs is missing). */
export async function runChecks(plan: DoctorPlan, ask: Ask, report: Report): Promise<void> {
  const { app } = plan;
  const api = await ask(app, { accept: API_ACCEPT });
  if (typeof api === 'string') {
    report('gate', fail(`${api}. Fix: check the URL, and that the proxy is running and reachable from here`));
    for (const name of CHECK_NAMES.slice(1)) report(name, skip('the proxy could not be reached'));
    for (const url of plan.others) report('behind the gate', skip(`${shown(url.href)}: the proxy could not be reached`));
    return;
  }
  const doctor: Doctor = { ask, proxy: proxyKindOf(api.headers) };
  report('gate', await gateOutcome(api, app, doctor));
  report('api', await anonymousOutcome(app, api, doctor));

  const signInPage = await followToSignIn(deepUrlOf(app), doctor);
  report('sign-in page', signInPage.outcome);
  report('return URL', returnUrlOutcome(signInPage, doctor.proxy));
  // Without a page found, Gatehouse's paths are looked for where the default routes put them.
  const loginPage = signInPage.loginPage ?? new URL('/login', app);
  report('client address', await clientAddressOutcome(loginPage, doctor));

  const credential = await signInFor(plan, loginPage, doctor, report);
  const sessionCookie = credential?.kind === 'session' ? `jwt=${credential.token}` : undefined;
  try {
    let signedInHeaders: Record<string, string> | undefined;
    if (credential !== undefined) {
      const headers = credentialHeaders(credential);
      const reached = await ask(app, { accept: BROWSER_ACCEPT, ...headers });
      const signedIn = signedInOutcome(reached, credential, doctor);
      report('signed in', signedIn);
      if (signedIn.status === 'ok') signedInHeaders = headers;
      await runProbeChecks(app, new URL(plan.probePath, app), credential, doctor, report);
    }
    await runOriginChecks(plan, loginPage, credential, doctor, report);
    const short = { isRefused: api.status === 401, signedInHeaders, hasCredential: credential !== undefined };
    report('long URL', await longUrlOutcome(app, short, doctor));
    report('sign-out', await signOutOutcome(loginPage, sessionCookie, doctor));
  } finally {
    // The doctor's own session ends (and is revoked where the service revokes on logout), also
    // when the sign-out page is not routed: the API's logout beside the sign-in page.
    if (sessionCookie !== undefined) await ask(new URL('api/auth/logout', loginPage), { accept: API_ACCEPT, cookie: sessionCookie });
  }
  for (const url of plan.others) {
    const plain = await ask(url, { accept: API_ACCEPT });
    const outcome = typeof plain === 'string' ? fail(plain) : await anonymousOutcome(url, plain, doctor);
    report('behind the gate', { ...outcome, text: `${shown(url.href)}: ${outcome.text}` });
  }
}

/**
 * public URL, then account API on each origin given (the first URL's, then each further URL's), at
 * the base the sign-in page is under there.
 */
async function runOriginChecks(plan: DoctorPlan, loginPage: URL, credential: Credential | undefined, doctor: Doctor, report: Report): Promise<void> {
  const basePath = new URL('.', loginPage).pathname;
  const origins = [...new Set([plan.app, ...plan.others].map((url) => url.origin))];
  const asked: OriginAsked[] = [];
  for (const origin of origins) asked.push(await askOrigin(new URL(basePath, origin), doctor));
  report('public URL', publicUrlOutcome(asked));
  for (const each of asked) report('account API', await accountApiOutcome(each, credential, doctor));
}

/**
 * cookie, and the credential the later checks use: a session signed in through the proxy (a TOTP
 * code on the third line when the account has a second factor), or the machine token given.
 */
async function signInFor(plan: DoctorPlan, loginPage: URL, doctor: Doctor, report: Report): Promise<Credential | undefined> {
  if (plan.machineToken !== undefined) {
    report('cookie', skip('not checked: a machine token signs nothing in, so no session cookie was set (give a username, password and TOTP code on standard input to check it)'));
    return { kind: 'token', token: plan.machineToken };
  }
  if (plan.signIn === undefined) {
    const why = "no credentials on standard input (printf '%s\\n%s\\n' NAME PASSWORD | gatehouse doctor URL)";
    for (const name of ['cookie', ...NEEDS_ACCOUNT]) report(name, skip(why));
    return undefined;
  }
  const signedIn = await signInAt(new URL('api/auth/authenticate', loginPage), plan.signIn, plan.app, doctor);
  report('cookie', signedIn.outcome);
  if (signedIn.session === undefined) {
    const why: Outcome = signedIn.outcome.status === 'skip' ? signedIn.outcome : skip('not signed in (see cookie)');
    for (const name of NEEDS_ACCOUNT) report(name, why);
  }
  return signedIn.session;
}
