import { octalMode, readSmallFile, SmallFileRefused, whoElseMayWrite } from './small-file.js';

/** How a key file is named in messages and what someone who could swap or read it could do. */
interface KeyFileRules {
  /** Starts every message: `GATEHOUSE_SECRET_FILE /run/secrets/x`. */
  readonly label: string;
  readonly maxBytes: number;
  /** What an owner or a writer other than us could do: "replace the secret". */
  readonly swapHarm: string;
  /** What anyone who reads it could do: "sign tokens". */
  readonly readHarm: string;
  /** What follows the label when the file does not exist. */
  readonly whenMissing: string;
  readonly uid: number | undefined;
  readonly warn: (message: string) => void;
  readonly refuse: (message: string) => Error;
}

/**
 * The bytes of a key file given by path (a container secret, a key kept outside the data
 * directory): refused when group or others may write it or a uid other than `uid` or root owns it
 * (Docker and Kubernetes secrets are root's), warned about when others may read it. Throws `refuse`'s.
 */
export async function readKeyFile(path: string, rules: KeyFileRules): Promise<Buffer> {
  let file: Awaited<ReturnType<typeof readSmallFile>>;
  try {
    file = await readSmallFile(path, rules.maxBytes);
  } catch (error) {
    if (error instanceof SmallFileRefused) {
      throw rules.refuse(`${rules.label} ${error.code === 'ENOENT' ? rules.whenMissing : error.message}.`);
    }
    throw error;
  }
  const { stats } = file;
  const { uid } = rules;
  const mode = octalMode(stats.mode);
  const problem = whoElseMayWrite(stats, uid, true);
  if (problem === 'owner') {
    throw rules.refuse(`${rules.label} belongs to uid ${stats.uid}, neither root nor the uid Gatehouse runs as (${uid}): its owner could ${rules.swapHarm}. Give it to Gatehouse's uid or to root (chown ${uid} ${path}, or chown root ${path}), or run Gatehouse as uid ${stats.uid}.`);
  }
  if (problem === 'writable') throw rules.refuse(`${rules.label} is writable by group or others (mode ${mode}), who could ${rules.swapHarm}: chmod 0600 ${path} (or 0400).`);
  if ((stats.mode & 0o044) !== 0) rules.warn(`${rules.label} is readable by group or others (mode ${mode}): anyone who reads it can ${rules.readHarm}; chmod 0600 ${path} unless this is a container secret only Gatehouse sees`);
  return file.bytes;
}
