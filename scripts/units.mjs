// The units of the code: every file under src/ belongs to exactly one, so a reviewer can read a unit
// on its own (SECURITY.md's reading list, docs/architecture.md). The core decides who gets in on every
// request; each other unit is either a capability an operator may leave unused or a part with one job
// the core calls. What a deployment runs is counted, not named: the files `gatehouse serve` loads are
// those the command line imports (importedFiles). `npm run size` prints the sizes; test/unit/units.test.ts
// holds the limits.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildSync } from 'esbuild';

/** At most this many non-blank lines in the core, and in any one file under src/. */
export const CORE_LIMIT = 5_050;
export const FILE_LIMIT = 400;

/**
 * A path is a file (`src/app.ts`), a folder with everything under it (`src/oidc/`), or a file name
 * prefix in one folder (`src/auth/totp*`). A file matched by two units' paths is an error, not a tie.
 * `offUnless`: the setting without which the unit, loaded by `serve`, runs nothing (its start returns
 * at once and its routes answer 404, as its own tests show).
 */
export const UNITS = Object.freeze([
  {
    name: 'core',
    holds: 'who gets in on every request: the access table and its judge, sessions and their records, tokens, passwords (hash format, throttle), machine tokens, the Flood API, the account and administrators\' routes, the gate and its pages\' routes, the account rules and users store, validation, the HTTP edge, and the composition',
    paths: [
      'src/app.ts', 'src/server.ts', 'src/errors.ts', 'src/time.ts',
      'src/auth/access.ts', 'src/auth/judge.ts', 'src/auth/amr.ts', 'src/auth/session.ts', 'src/auth/session-key.ts',
      'src/auth/session-records.ts', 'src/auth/jwt.ts', 'src/auth/secret.ts', 'src/auth/password.ts',
      'src/auth/throttled-password.ts', 'src/auth/login-throttle.ts', 'src/auth/machine-tokens.ts',
      'src/http/body-policy.ts', 'src/http/body.ts', 'src/http/client-address.ts', 'src/http/cookies.ts',
      'src/http/errors.ts', 'src/http/header-value.ts', 'src/http/host-header.ts', 'src/http/lingering-close.ts',
      'src/http/network-key.ts', 'src/http/query.ts', 'src/http/respond.ts', 'src/http/router.ts', 'src/http/same-origin.ts',
      'src/routes/auth.ts', 'src/routes/account.ts', 'src/routes/forward.ts', 'src/routes/gate-service.ts',
      'src/routes/login-redirect.ts', 'src/routes/context.ts',
      'src/routes/session-cookie.ts', 'src/routes/login-page.ts',
      'src/routes/logout-page.ts', 'src/routes/forbidden-page.ts', 'src/routes/health.ts',
      'src/store/users.ts', 'src/store/group-commit.ts', 'src/store/account-rules.ts', 'src/store/account-summary.ts',
      'src/store/machine-token-rules.ts', 'src/store/session-file.ts',
      'src/validate/auth.ts', 'src/validate/check.ts', 'src/validate/client-settings.ts', 'src/validate/groups.ts',
      'src/validate/host-name.ts', 'src/validate/level.ts', 'src/validate/machine-token.ts', 'src/validate/utf8.ts',
      'src/validate/look-alike.ts', 'src/validate/profile.ts',
    ],
  },
  {
    name: 'own origin',
    holds: 'which origin a request was sent to: Gatehouse\'s own (--public-url\'s, else loopback), a Flood web client\'s, or an app\'s; the judge refuses the rows of accounts and administration elsewhere',
    paths: ['src/http/request-origin.ts'],
  },
  {
    name: 'data directory',
    holds: 'how bytes reach the disk and who holds the directory: atomic writes, the document store, the lock, the directory\'s checks, small and key files',
    paths: [
      'src/store/atomic-file.ts', 'src/store/document-store.ts', 'src/store/file-system.ts', 'src/store/lock.ts',
      'src/store/lock-file.ts', 'src/store/lock-holder.ts', 'src/store/data-dir.ts', 'src/store/small-file.ts',
      'src/store/key-file.ts',
    ],
  },
  {
    name: 'logout revocation',
    holds: 'with --revoke-on-logout (off by default), the list of logged-out tokens refused until they expire, bounded and durable',
    paths: ['src/auth/revocations.ts'],
    offUnless: '--revoke-on-logout',
  },
  {
    name: 'JOSE',
    holds: 'the compact form every token is read and written in, for session tokens and id_tokens alike: segments, JSON segments, the header\'s alg, crit and typ, exp and iat, and the typed refusals',
    paths: ['src/auth/jose.ts'],
  },
  {
    name: 'hashing pool',
    holds: 'the scrypt worker threads and the fair queue in front of them',
    paths: ['src/auth/password-hasher.ts', 'src/auth/work-limiter.ts'],
  },
  {
    name: 'settings and logging',
    holds: 'every setting, parsed once; the JSON logger and its terminal-safe escaping',
    paths: ['src/config.ts', 'src/log/'],
  },
  {
    name: 'passkeys',
    holds: 'WebAuthn by hand (CBOR, COSE, the relying party\'s checks, challenges, decoys), the passkey routes, their validators and store rules',
    paths: ['src/webauthn/', 'src/routes/passkeys.ts', 'src/validate/passkey.ts', 'src/store/passkey-rules.ts'],
  },
  {
    name: 'TOTP and QR',
    holds: 'RFC 6238 codes, recovery codes, the sealed seed, base32, the QR encoder',
    paths: ['src/auth/totp*', 'src/auth/base32.ts', 'src/auth/seal.ts', 'src/routes/totp.ts', 'src/qr/'],
  },
  {
    name: 'OpenID Connect',
    holds: 'the OpenID Connect provider: clients, codes, signing keys, its routes and pages',
    paths: ['src/oidc/'],
    offUnless: '--public-url',
  },
  {
    name: 'sessions people see',
    holds: 'the routes that list and end sessions, the browser\'s name from User-Agent, and what logging out ends; the records and the check every request makes of them are the core\'s',
    paths: ['src/routes/sessions.ts', 'src/routes/browser-name.ts', 'src/auth/logout.ts'],
  },
  {
    name: 'invitations and reset links',
    holds: 'single-use links that make an account or set a new password, their file, routes and pages',
    paths: ['src/invitations/'],
  },
  {
    name: 'pages',
    holds: 'the pages under {base}/gatehouse/ and the sign-in page, built once on one shell with one policy',
    paths: ['src/pages/'],
  },
  {
    name: 'command line',
    holds: '`gatehouse serve`, the offline commands, `doctor` with the probe it reads behind the gate, `flood-token`',
    paths: ['src/cli.ts', 'src/cli/', 'src/routes/probe.ts'],
  },
].map((unit) => Object.freeze({ ...unit, paths: Object.freeze(unit.paths) })));

/** Whether `file` (a path from the repository's root, with `/`) is what `path` names. */
export function isMatch(path, file) {
  if (path.endsWith('/')) return file.startsWith(path);
  const star = path.indexOf('*');
  if (star < 0) return file === path;
  const prefix = path.slice(0, star);
  return file.startsWith(prefix) && !file.slice(prefix.length).includes('/');
}

/** The units whose paths name `file`: exactly one for every file under src/. */
export function unitsOf(file, units = UNITS) {
  return units.filter((unit) => unit.paths.some((path) => isMatch(path, file)));
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

/** Browser code (bundled into src/pages/built-scripts.js by the build) and declarations: files Node never loads. */
const isNeverLoaded = (file) => file.includes('/browser/') || file.endsWith('.d.ts');

/**
 * Where a deployment's code is counted from: the command line (`gatehouse serve` loads every file it
 * imports, whatever the command) and the serve command (src/cli/commands.ts: the settings, the logger
 * and the service, src/server.ts, with everything it imports).
 */
export const ENTRIES = Object.freeze({ loaded: 'src/cli.ts', service: 'src/cli/commands.ts' });

/**
 * The files under src/ that `entry` imports, directly or not, as esbuild's bundler follows them for
 * the one-file build (scripts/build-single-file.mjs): imports of types only are erased and load
 * nothing. src/ has no dynamic import (test/unit/units.test.ts), so these are the files Node loads.
 */
export function importedFiles(root, entry) {
  const { metafile } = buildSync({
    absWorkingDir: root, entryPoints: [entry], bundle: true, write: false, metafile: true,
    platform: 'node', format: 'esm', packages: 'external', logLevel: 'error',
  });
  return Object.keys(metafile.inputs).filter((file) => file.startsWith('src/')).sort();
}

/** Lines holding anything but white space. */
export function nonBlankLines(text) {
  return text.split('\n').filter((line) => line.trim() !== '').length;
}

const sum = (files) => files.reduce((total, { lines }) => total + lines, 0);

/**
 * The sizes of the repository at `root`: every unit with its files and their non-blank lines (and
 * how many of them the serve command imports), the files no unit or more than one unit claims, and
 * what a deployment loads (`loaded`), what of that the serve command can run (`service`), and what
 * it runs with no settings (`byDefault`: the service less the units off by default).
 */
export function measure(root) {
  const files = sourceFiles(root).map((file) => ({ file, lines: nonBlankLines(readFileSync(join(root, file), 'utf8')) }));
  const service = new Set(importedFiles(root, ENTRIES.service));
  const loaded = new Set(importedFiles(root, ENTRIES.loaded));
  const units = UNITS.map((unit) => {
    const own = files.filter(({ file }) => unitsOf(file).includes(unit));
    return { name: unit.name, offUnless: unit.offUnless, lines: sum(own), serviceLines: sum(own.filter(({ file }) => service.has(file))), files: own };
  });
  const part = (isIn) => {
    const chosen = files.filter(({ file }) => isIn(file));
    return { files: chosen.length, lines: sum(chosen) };
  };
  const isOffByDefault = (file) => unitsOf(file).some((unit) => unit.offUnless !== undefined);
  return {
    units,
    unclaimed: files.filter(({ file }) => unitsOf(file).length === 0).map(({ file }) => file),
    claimedTwice: files.filter(({ file }) => unitsOf(file).length > 1).map(({ file }) => file),
    total: sum(files),
    files: files.length,
    serverFiles: files.filter(({ file }) => !isNeverLoaded(file)).length,
    deployment: {
      loaded: part((file) => loaded.has(file)),
      service: part((file) => service.has(file)),
      byDefault: part((file) => service.has(file) && !isOffByDefault(file)),
    },
  };
}
