// The borders of src/ (docs/architecture.md draws them): the core, the features, and the composition
// that puts them together. test/unit/borders.test.ts reads every import under src/ (types included)
// and holds the three rules:
// - the core imports only the core;
// - a feature imports its own folder and the core's declared surface (CORE_SURFACE), nothing else;
// - no file imports itself again through others (no cycle), whatever parts they are in.
// The composition (COMPOSITION) may import anything: it is where the features are listed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import ts from 'typescript';

/** Each capability an operator may leave unused, a folder under src/ with its routes, rules and checks. */
export const FEATURES = Object.freeze([
  { folder: 'src/passkeys/', holds: 'WebAuthn by hand (CBOR, COSE, the relying party\'s checks, challenges, decoys), the passkey routes, the stored passkeys\' checks and rules, the account page\'s passkeys section' },
  { folder: 'src/totp/', holds: 'RFC 6238 codes and recovery codes, the seed\'s seal and the seal key, the sign-in\'s code step, the account\'s TOTP routes, base32, the QR encoder, the account page\'s authenticator app section' },
  { folder: 'src/sessions/', holds: 'the routes that list and end sessions (the records, and the check every request makes of them, are the core\'s), the account page\'s sessions section' },
  { folder: 'src/invitations/', holds: 'single-use links that make an account or set a new password: their file, routes, pages and commands' },
  { folder: 'src/oidc/', holds: 'the OpenID Connect provider: clients, codes, signing keys, its routes, pages and commands', offUnless: '--public-url' },
  { folder: 'src/cli/', holds: 'the commands: `serve`, the offline `users`, `tokens` and `secret`, `doctor`, `flood-token`' },
].map(Object.freeze));

/** Where the features are listed and put together: the service's and the command line's. */
export const COMPOSITION = Object.freeze(['src/server.ts', 'src/features.ts', 'src/commands.ts', 'src/cli.ts']);

/**
 * What of the core a feature may import: its extension points, the HTTP edge's and validation's
 * helpers, the account store and rules, sessions and cookies, the page shell, the command line's
 * helpers. A path ending in `/` is a folder with everything under it. The rest of the core (the app,
 * the router, the judge and the table, the body policy, the hashing pool, the group commit, the lock)
 * is the core's own.
 */
export const CORE_SURFACE = Object.freeze([
  'src/feature.ts', 'src/lifecycle.ts', 'src/config.ts', 'src/time.ts', 'src/errors.ts', 'src/log/', 'src/validate/', 'src/command-line/',
  'src/http/body.ts', 'src/http/client-address.ts', 'src/http/header-value.ts', 'src/http/host-header.ts',
  'src/http/network-key.ts', 'src/http/respond.ts',
  'src/auth/amr.ts', 'src/auth/credential-changes.ts', 'src/auth/jose.ts', 'src/auth/jwt.ts', 'src/auth/login-throttle.ts', 'src/auth/logout.ts',
  'src/auth/machine-tokens.ts', 'src/auth/password.ts', 'src/auth/revocations.ts', 'src/auth/secret.ts',
  'src/auth/session-key.ts', 'src/auth/session-records.ts', 'src/auth/session.ts', 'src/auth/throttled-password.ts',
  'src/routes/context.ts', 'src/routes/session-cookie.ts', 'src/routes/forward.ts', 'src/routes/path-username.ts',
  'src/store/users.ts', 'src/store/stored-fields.ts', 'src/store/account-rules.ts', 'src/store/machine-token-rules.ts', 'src/store/atomic-file.ts',
  'src/store/document-store.ts', 'src/store/file-system.ts', 'src/store/key-file.ts', 'src/store/small-file.ts',
  'src/store/session-file.ts', 'src/store/data-dir.ts', 'src/store/lock.ts',
  'src/pages/shell.ts', 'src/pages/built-scripts.d.ts', 'src/pages/session-entry.ts',
  // The pages' browser code a feature's section runs with: the helpers, one session as people read
  // it, and the typed hand-over of the account and users pages to their sections.
  'src/pages/browser/helpers.ts', 'src/pages/browser/passkey-json.ts', 'src/pages/browser/session-entry.ts',
  'src/pages/browser/account-page.ts', 'src/pages/browser/users-page.ts',
]);

/** At most this many non-blank lines in any one file under src/. */
export const FILE_LIMIT = 400;

const isIn = (path, file) => (path.endsWith('/') ? file.startsWith(path) : file === path);

/** `core`, `composition`, or the folder of the feature `file` (a path from the repository's root) is in. */
export function partOf(file, features = FEATURES) {
  if (COMPOSITION.includes(file)) return 'composition';
  return features.find(({ folder }) => file.startsWith(folder))?.folder ?? 'core';
}

/** Every file under src/ of the repository at `root`, as paths from the root, sorted; not the build's output there. */
export function sourceFiles(root) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? walk(path) : [relative(root, path).split('\\').join('/')];
    });
  return walk(join(root, 'src')).filter((file) => file !== 'src/pages/built-scripts.js').sort();
}

/** The files under src/ that `text` (the source of `file`) imports, types only included, as paths from the root. */
export function importsIn(file, text) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => posix.normalize(posix.join(posix.dirname(file), name)).replace(/\.js$/, '.ts'));
}

/** Every TypeScript file under src/ with the files it imports. */
export function importGraph(root) {
  const files = sourceFiles(root).filter((file) => file.endsWith('.ts'));
  const known = new Set(files);
  // `./built-scripts.js` is the build's output, declared by `built-scripts.d.ts`.
  const declared = (target) => (!known.has(target) && known.has(target.replace(/\.ts$/, '.d.ts')) ? target.replace(/\.ts$/, '.d.ts') : target);
  return new Map(files.map((file) => [file, importsIn(file, readFileSync(join(root, file), 'utf8')).map(declared)]));
}

/** Each import that crosses a border the wrong way, as `from -> to: why`. */
export function borderProblems(graph, features = FEATURES, surface = CORE_SURFACE) {
  const problems = [];
  for (const [file, imports] of graph) {
    const from = partOf(file, features);
    if (from === 'composition') continue;
    for (const target of imports) {
      const to = partOf(target, features);
      if (from === 'core' && to !== 'core') problems.push(`${file} -> ${target}: the core imports no ${to === 'composition' ? 'composition' : 'feature'}`);
      if (from !== 'core' && to === 'composition') problems.push(`${file} -> ${target}: a feature imports no composition`);
      if (from !== 'core' && to !== 'core' && to !== 'composition' && to !== from) problems.push(`${file} -> ${target}: a feature imports no other feature`);
      if (from !== 'core' && to === 'core' && !surface.some((path) => isIn(path, target))) problems.push(`${file} -> ${target}: not in the core's surface`);
    }
  }
  return problems;
}

/** Every cycle of imports, each as its files sorted: Tarjan's strongly connected components of more than one file, or a file importing itself. */
export function importCycles(graph) {
  let index = 0;
  const stack = [];
  const onStack = new Set();
  const indexOf = new Map();
  const lowOf = new Map();
  const cycles = [];
  const visit = (file) => {
    indexOf.set(file, index);
    lowOf.set(file, index);
    index++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!indexOf.has(target)) {
        visit(target);
        lowOf.set(file, Math.min(lowOf.get(file), lowOf.get(target)));
      } else if (onStack.has(target)) lowOf.set(file, Math.min(lowOf.get(file), indexOf.get(target)));
    }
    if (lowOf.get(file) !== indexOf.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file);
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}
