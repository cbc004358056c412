import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';

/** What a running service knows about how it was started, to print an offline command that works where it runs. */
export type ProcessFacts = Readonly<ReturnType<typeof processFacts>>;

export function processFacts() {
  let userName: string | undefined;
  try {
    userName = userInfo().username;
  } catch {
    userName = undefined; // a uid with no passwd entry (a container's --user 1234)
  }
  return {
    execPath: process.execPath,
    script: process.argv[1] ?? 'gatehouse', // dist/cli.js or the one-file gatehouse.mjs
    env: process.env,
    uid: process.getuid?.(),
    userName,
    // Docker writes /.dockerenv, podman /run/.containerenv.
    isInContainer: existsSync('/.dockerenv') || existsSync('/run/.containerenv'),
  };
}

/** One shell word: as is when it holds only characters no shell treats specially, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./,:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * How to run an offline command (`args`) on `dataDir`, ending in a command line that works as printed where the
 * service runs: it needs the service stopped (the lock) and the data directory's owner (under systemd, its user).
 */
export function offlineInstruction(facts: ProcessFacts, dataDir: string, args: readonly string[]): string {
  const program = [facts.execPath, facts.script, ...args, '--data-dir', dataDir].map(shellWord).join(' ');
  // systemd sets INVOCATION_ID for every unit it starts; an operator there is typically root.
  const isSystemdService = facts.env['INVOCATION_ID'] !== undefined;
  const asUser = isSystemdService && facts.uid !== 0 && facts.userName !== undefined
    ? `sudo -u ${shellWord(facts.userName)} `
    : '';
  // Inside a container the same line works in the container's shell; from the host, a container
  // of its own is stopped, so the line runs in a new one on the same volume.
  const inContainer = facts.isInContainer
    ? ` (when the service is a container of its own: stop it, and run that line in a new container of the same image with the same data volume, e.g. docker compose run --rm SERVICE ${program})`
    : '';
  return `stop the service, then run: ${asUser}${program}${inContainer}`;
}
