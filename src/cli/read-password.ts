import type { Readable } from 'node:stream';
import { decodeUtf8Strict } from '../validate/utf8.js';
import { UsageError } from './usage-error.js';

export interface PasswordSource {
  readonly stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  readonly stderr: { write(text: string): unknown };
}

/**
 * Reads a new password: from all of stdin with --password-stdin; else, at a terminal, twice
 * without echo; else (piped input) the first line. Never from argv, where `ps` would show it.
 */
export async function readNewPassword(io: PasswordSource, fromStdin: boolean): Promise<string> {
  if (fromStdin) return stripNewline(await readAll(io.stdin));
  if (io.stdin.isTTY === true && io.stdin.setRawMode !== undefined) {
    const first = await readHidden(io, 'New password: ');
    const second = await readHidden(io, 'Repeat it: ');
    if (first !== second) throw new Error('the two passwords differ');
    return first;
  }
  io.stderr.write('New password: ');
  return readLine(io.stdin);
}

function stripNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** As HTTP bodies are: bytes that are not UTF-8 would otherwise become a different password. */
function passwordText(bytes: Uint8Array): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new UsageError('the password is not valid UTF-8');
  return text;
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return passwordText(Buffer.concat(chunks));
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
        resolve(stripNewline(`${passwordText(line)}\n`));
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
      if (typed === undefined) return done(new UsageError('the password is not valid UTF-8'));
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
