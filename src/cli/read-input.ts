import type { Readable } from 'node:stream';
import { readSmallFile, SmallFileRefused } from '../store/small-file.js';
import { decodeUtf8Strict } from '../validate/utf8.js';
import type { ParsedValues } from '../command-line/flags.js';
import { UsageError } from '../command-line/usage-error.js';

// Far above any client settings (docs/contract/flood-api.md "Client settings" caps their strings at 4,096 characters).
const MAX_CLIENT_BYTES = 64 * 1024;
const NOT_A_PASSWORD = 'the password is not valid UTF-8';

interface PasswordSource {
  readonly stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  readonly stderr: { write(text: string): unknown };
}

/** As HTTP bodies are: bytes that are not UTF-8 would otherwise become a different password or name. */
function utf8Text(bytes: Uint8Array, notText: string): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new UsageError(notText);
  return text;
}

/** All of `stream` as text; throws UsageError `tooLarge` past `maxBytes`, `notText` when it is not UTF-8. */
export async function readAllText(
  stream: Readable, maxBytes: number, tooLarge: string, notText = 'standard input is not valid UTF-8',
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.from(chunk as Buffer);
    size += bytes.length;
    if (size > maxBytes) throw new UsageError(tooLarge);
    chunks.push(bytes);
  }
  return utf8Text(Buffer.concat(chunks), notText);
}

/** A file named on the command line, read with the limits of readSmallFile; a refusal is a usage error about `what`. */
export async function readGivenFile(path: string, maxBytes: number, what: string): ReturnType<typeof readSmallFile> {
  try {
    return await readSmallFile(path, maxBytes);
  } catch (error) {
    if (error instanceof SmallFileRefused) throw new UsageError(`${what} ${error.message}`);
    throw error;
  }
}

/**
 * Reads a new password: from all of stdin with --password-stdin; else, at a terminal, twice
 * without echo; else (piped input) the first line. Never from argv, where `ps` would show it.
 */
export async function readNewPassword(io: PasswordSource, fromStdin: boolean): Promise<string> {
  if (fromStdin) return (await readAllText(io.stdin, Infinity, '', NOT_A_PASSWORD)).replace(/\r?\n$/, '');
  if (io.stdin.isTTY === true && io.stdin.setRawMode !== undefined) {
    const first = await readHidden(io, 'New password: ');
    const second = await readHidden(io, 'Repeat it: ');
    if (first !== second) throw new Error('the two passwords differ');
    return first;
  }
  io.stderr.write('New password: ');
  const line = await readLine(io.stdin);
  // Piped, nothing was typed to end the prompt's line: what the command says next would follow it.
  io.stderr.write('\n');
  return line;
}

function readLine(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    // Bytes, decoded once the line is whole: a character split across chunks stays one character.
    let bytes = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      bytes = Buffer.concat([bytes, Buffer.from(chunk)]);
      const newline = bytes.indexOf(0x0a);
      if (newline >= 0) finish(bytes.subarray(0, newline));
    };
    const onEnd = (): void => finish(bytes);
    const finish = (line: Buffer): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', reject);
      stream.pause();
      try {
        resolve(utf8Text(line, NOT_A_PASSWORD).replace(/\r$/, ''));
      } catch (error) {
        reject(error);
      }
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

function readHidden(io: PasswordSource, prompt: string): Promise<string> {
  io.stderr.write(prompt);
  const stdin = io.stdin;
  stdin.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      const typed = decodeUtf8Strict(chunk);
      if (typed === undefined) return done(new UsageError(NOT_A_PASSWORD));
      for (const char of typed) {
        if (char === '\u0003') return done(new Error('interrupted'));
        if (char === '\r' || char === '\n') return done();
        if (char === '\u007f' || char === '\b') text = text.slice(0, -1);
        else text += char;
      }
    };
    const done = (error?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write('\n');
      if (error === undefined) resolve(text);
      else reject(error);
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

/**
 * `users add`'s client settings (JSON text) from --client (visible in `ps`), --client-file PATH, or --client-stdin:
 * the password on the first line, the JSON after it (one stdin cannot hold both apart any other way). None: undefined.
 */
export async function readClientInput(
  values: ParsedValues, stdin: Readable & { isTTY?: boolean },
): Promise<{ json: string; password?: string } | undefined> {
  const given = ['client', 'client-file', 'client-stdin']
    .filter((flag) => values[flag] !== undefined && values[flag] !== false);
  if (given.length === 0) return undefined;
  if (given.length > 1) throw new UsageError(`give the client settings once: ${given.map((flag) => `--${flag}`).join(' and ')} were both given`);
  const clientFile = values['client-file'];
  if (typeof clientFile === 'string') {
    const { bytes } = await readGivenFile(clientFile, MAX_CLIENT_BYTES, `--client-file ${JSON.stringify(clientFile)}`);
    return { json: utf8Text(bytes, `--client-file ${JSON.stringify(clientFile)} is not valid UTF-8`) };
  }
  const client = values['client'];
  if (typeof client === 'string') return { json: client };
  if (stdin.isTTY === true) {
    throw new UsageError('--client-stdin reads the password and then the client settings from piped standard input, not a terminal: pipe them in, or use --client-file PATH');
  }
  const text = await readAllText(stdin, MAX_CLIENT_BYTES, `standard input is larger than ${MAX_CLIENT_BYTES} bytes`);
  const newline = text.indexOf('\n');
  if (newline < 0) throw new UsageError('--client-stdin expects the password on the first line of standard input and the client settings (JSON) after it');
  return { json: text.slice(newline + 1), password: text.slice(0, newline).replace(/\r$/, '') };
}
