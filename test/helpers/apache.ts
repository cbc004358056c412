// Apache httpd with mod_auth_openidc (Debian's apache2 and libapache2-mod-auth-openidc), started as
// our own foreground process (`apache2 -X`) with a configuration of ours in a temp dir, on a
// loopback port: a relying party people use in front of their apps, protecting /protected through
// Gatehouse. Every wait is bounded; stop() ends the process and removes the directory.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.js';

export const APACHE_PATH = process.env['APACHE_PATH'] ?? '/usr/sbin/apache2';
export const MODULES = process.env['APACHE_MODULES'] ?? '/usr/lib/apache2/modules';
const START_TIMEOUT_MS = 20_000;

export interface RelyingPartySettings {
  /** Gatehouse's discovery URL, as the app is given it. */
  readonly metadataUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The OIDCScope line's value. */
  readonly scope: string;
}

export interface RunningApache {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** The redirect URI mod_auth_openidc sends (register it for the client). */
  readonly redirectUri: string;
  /** Where the test's logout returns to (register it as a post-logout redirect URI). */
  readonly loggedOutUri: string;
  /** The configuration as run, and the error log so far: for failure messages. */
  describe(): string;
  stop(): Promise<void>;
}

export function isApacheInstalled(): boolean {
  return existsSync(APACHE_PATH) && existsSync(join(MODULES, 'mod_auth_openidc.so'));
}

/** The port and URIs Apache will use, chosen before Gatehouse's client is registered with them. */
export async function reserveApache(): Promise<{ port: number; redirectUri: string; loggedOutUri: string }> {
  const port = await freePort();
  return { port, ...urisOf(port) };
}

const urisOf = (port: number) => ({
  redirectUri: `http://127.0.0.1:${port}/protected/redirect_uri`,
  loggedOutUri: `http://127.0.0.1:${port}/loggedout.html`,
});

/**
 * Apache on `port` protecting /protected with mod_auth_openidc as the client `settings` name. The
 * protected page (Apache's status page) carries the claims mod_auth_openidc passes on, as headers.
 */
export async function startApache(port: number, settings: RelyingPartySettings): Promise<RunningApache> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-apache-'));
  const { redirectUri, loggedOutUri } = urisOf(port);
  // As root, Apache answers as nobody, who cannot search the tests' private temp directory: the
  // pages are the server-status handler's, which reads no file, under a document root anyone can search.
  const isRoot = process.getuid?.() === 0;
  const modules = ['mpm_event', 'authz_core', 'authn_core', 'authz_user', 'headers', 'status', 'auth_openidc'];
  const config = `ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn auth_openidc:info
${modules.map((name) => `LoadModule ${name}_module ${MODULES}/mod_${name}.so`).join('\n')}
${isRoot ? 'User nobody\nGroup nogroup' : ''}
# No document is served (every page is a handler's); a directory nobody may read nothing from.
DocumentRoot ${MODULES}
<Directory />
  AllowOverride None
</Directory>

OIDCProviderMetadataURL ${settings.metadataUrl}
OIDCClientID ${settings.clientId}
OIDCClientSecret ${settings.clientSecret}
OIDCRedirectURI ${redirectUri}
OIDCCryptoPassphrase ${randomBytes(24).toString('base64url')}
OIDCScope "${settings.scope}"
OIDCPKCEMethod S256
OIDCRemoteUserClaim preferred_username
OIDCPassClaimsAs environment

<Location /loggedout.html>
  SetHandler server-status
</Location>
<Location /protected>
  SetHandler server-status
  AuthType openid-connect
  Require valid-user
  Header always set X-Remote-User "expr=%{REMOTE_USER}"
  Header always set X-Claim-Sub "%{OIDC_CLAIM_sub}e"
  Header always set X-Claim-Email "%{OIDC_CLAIM_email}e"
  Header always set X-Claim-Name "%{OIDC_CLAIM_name}e"
  Header always set X-Claim-Groups "%{OIDC_CLAIM_groups}e"
</Location>
`;
  const configPath = join(dir, 'httpd.conf');
  await writeFile(configPath, config);
  const child = spawn(APACHE_PATH, ['-X', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const errorLog = (): string => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  const describe = (): string => `--- apache config\n${config}\n--- apache output\n${output}\n--- apache error log\n${errorLog()}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const text = describe();
      await stop();
      throw new Error(`apache exited before listening\n${text}`);
    }
    if (await isListening(port)) break;
    if (Date.now() > deadline) {
      const text = describe();
      await stop();
      throw new Error(`apache did not listen on 127.0.0.1:${port} within ${START_TIMEOUT_MS} ms\n${text}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, origin: `http://127.0.0.1:${port}`, redirectUri, loggedOutUri, describe, stop };
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
