import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** Why readSmallFile gave up, in words a caller puts after the file's name; `code` is the errno code, if any. */
export class SmallFileRefused extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The bytes and stats of a small regular file, read through one handle: what is checked (fstat)
 * is what is read, not whatever the path names a moment later, and no more than `maxBytes` are
 * read, even from a file that grows meanwhile. O_NONBLOCK so a FIFO cannot hang the open (it is
 * then refused as not a regular file). Throws SmallFileRefused.
 */
export async function readSmallFile(path: string, maxBytes: number): Promise<{ bytes: Buffer; stats: Stats }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(refuseUnreadable);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new SmallFileRefused('is not a regular file');
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw new SmallFileRefused(`is larger than ${maxBytes} bytes`);
    }
    return { bytes: buffer.subarray(0, length), stats };
  } catch (error) {
    if (error instanceof SmallFileRefused) throw error;
    refuseUnreadable(error);
  } finally {
    await handle.close();
  }
}

function refuseUnreadable(error: unknown): never {
  const code = (error as { code?: unknown }).code;
  const known = typeof code === 'string' ? code : 'unreadable';
  throw new SmallFileRefused(`cannot be read (${known})`, known);
}

type OtherWriter = 'owner' | 'writable';

/**
 * Who besides Gatehouse could change a file or directory: 'owner' when a uid other than `uid` (or
 * root, where `mayRootOwn`) owns it, 'writable' when group or others may write it.
 */
export function whoElseMayWrite(stats: Stats, uid: number | undefined, mayRootOwn: boolean): OtherWriter | undefined {
  if (uid !== undefined && stats.uid !== uid && !(mayRootOwn && stats.uid === 0)) return 'owner';
  return (stats.mode & 0o022) !== 0 ? 'writable' : undefined;
}

/** A mode's permission bits as `chmod` takes them: "0640". */
export function octalMode(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}
