import type { Readable } from 'node:stream';
import { readSmallFile, SmallFileRefused } from '../store/small-file.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import { UsageError } from './usage-error.js';

// Far above any client settings (INTERFACE.md caps their strings at 4,096 characters).
const MAX_INPUT_BYTES = 64 * 1024;

export const CLIENT_EXAMPLE = '{"client":"rTorrent","type":"socket","version":1,"socket":"/run/rtorrent.sock"}';

/** Where `users add` takes the client settings from: exactly one of the three flags. */
export interface ClientSource {
  readonly client?: string | boolean | undefined;
  readonly 'client-file'?: string | boolean | undefined;
  readonly 'client-stdin'?: string | boolean | undefined;
}

export interface ClientInput {
  /** The client settings' JSON text, not yet parsed. */
  readonly json: string;
  /** With --client-stdin, the password from the first line of standard input. */
  readonly password: string | undefined;
}

/**
 * Reads the client settings from --client (argv: visible in `ps` and shell history), --client-file
 * PATH, or --client-stdin, where standard input holds the password on its first line and the
 * JSON after it (one stdin cannot hold both apart any other way). Throws UsageError.
 */
export async function readClientInput(values: ClientSource, stdin: Readable & { isTTY?: boolean }): Promise<ClientInput> {
  const given = (['client', 'client-file', 'client-stdin'] as const).filter((flag) => values[flag] !== undefined && values[flag] !== false);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? `users add needs the client settings as JSON: --client-file PATH (recommended), --client-stdin, or --client JSON, e.g. '${CLIENT_EXAMPLE}'`
        : `give the client settings once: ${given.map((flag) => `--${flag}`).join(' and ')} were both given`,
    );
  }
  const clientFile = values['client-file'];
  if (typeof clientFile === 'string') return { json: await readClientFile(clientFile), password: undefined };
  const client = values.client;
  if (typeof client === 'string') return { json: client, password: undefined };
  if (stdin.isTTY === true) {
    throw new UsageError('--client-stdin reads the password and then the client settings from piped standard input, not a terminal: pipe them in, or use --client-file PATH');
  }
  const text = decodeUtf8Strict(await readAllBytes(stdin));
  if (text === undefined) throw new UsageError('standard input is not valid UTF-8');
  const newline = text.indexOf('\n');
  if (newline < 0) throw new UsageError('--client-stdin expects the password on the first line of standard input and the client settings (JSON) after it');
  return { json: text.slice(newline + 1), password: text.slice(0, newline).replace(/\r$/, '') };
}

async function readClientFile(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    ({ bytes } = await readSmallFile(path, MAX_INPUT_BYTES));
  } catch (error) {
    if (error instanceof SmallFileRefused) throw new UsageError(`--client-file ${JSON.stringify(path)} ${error.message}`);
    throw error;
  }
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new UsageError(`--client-file ${JSON.stringify(path)} is not valid UTF-8`);
  return text;
}

async function readAllBytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.from(chunk as Buffer);
    total += bytes.length;
    if (total > MAX_INPUT_BYTES) throw new UsageError(`standard input is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
