// The documentation holds together: every relative link in README.md, SECURITY.md, docs/*.md and docs/contract/*.md
// reaches a file (and a heading, for an anchor), every repository path they name in backticks
// exists (with the function or constant named right after it), README stays a page a user reads
// (at most 400 lines), the settings table matches the settings the service parses, and every
// `gatehouse …` command shown uses a command and flags the command line has.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SERVE_HELP } from '../../src/cli/serve.js';
import { DOCTOR_HELP } from '../../src/cli/doctor.js';
import { FLOOD_TOKEN_HELP } from '../../src/cli/flood-token.js';
import { SECRET_HELP } from '../../src/cli/offline.js';
import { COMMANDS, USERS_HELP } from '../../src/commands.js';
import { TOKENS_HELP } from '../../src/cli/tokens.js';
import { CLIENTS_HELP } from '../../src/oidc/cli/clients-command.js';
import { KEYS_HELP } from '../../src/oidc/cli/keys-command.js';
import { SETTINGS } from '../../src/config.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAX_README_LINES = 400;

function docFiles(): string[] {
  const markdownIn = (folder: string): string[] => {
    const dir = join(ROOT, folder);
    return existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => name.endsWith('.md'))
          .map((name) => join(folder, name))
          .sort()
      : [];
  };
  return ['README.md', 'SECURITY.md', ...markdownIn('docs'), ...markdownIn('docs/contract')];
}

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** The text outside fenced code blocks, line by line (links and headings live there). */
function proseLines(text: string): string[] {
  let isFenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      isFenced = !isFenced;
      return '';
    }
    return isFenced ? '' : line;
  });
}

/** The lines inside fenced code blocks. */
function codeLines(text: string): string[] {
  let isFenced = false;
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) isFenced = !isFenced;
    else if (isFenced) lines.push(line);
  }
  return lines;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Markdown link targets outside code: `[text](target)`, inline code spans removed first. */
function linksOf(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(match[1] ?? '');
  }
  return targets;
}

/** Every `test/….test.ts` ("name", "name") in `text`, as [path, name] pairs. */
function citedTestNames(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const match of text.matchAll(/`(test\/[^`\s]+\.test\.ts)` \(((?:"[^"]+"(?:, )?)+)\)/g)) {
    for (const name of (match[2] ?? '').matchAll(/"([^"]+)"/g)) pairs.push([match[1] ?? '', name[1] ?? '']);
  }
  return pairs;
}

/** The rows of SECURITY.md's promise tables (`| promise | code | test |`), as their three cells. */
function promiseRows(text: string): Array<{ line: string; code: string; test: string }> {
  const rows: Array<{ line: string; code: string; test: string }> = [];
  let isPromiseTable = false;
  for (const line of proseLines(text)) {
    if (!line.startsWith('|')) {
      isPromiseTable = false;
      continue;
    }
    if (/^\|\s*promise\s*\|\s*code\s*\|\s*test\s*\|$/.test(line)) {
      isPromiseTable = true;
      continue;
    }
    if (!isPromiseTable || /^\|\s*-/.test(line)) continue;
    // Split on the cell borders, not on a `|` inside a code span.
    const cells = line.replace(/`[^`]*`/g, (span) => span.replaceAll('|', '\u0000')).split('|').slice(1, -1);
    const [, code = '', test = ''] = cells.map((cell) => cell.replaceAll('\u0000', '|'));
    rows.push({ line, code, test });
  }
  return rows;
}

const MAX_SECURITY_LINE = 600;

describe('SECURITY.md: one line per promise, claim, code, test', () => {
  const text = read('SECURITY.md');
  const rows = promiseRows(text);

  it('the row reader finds cells and cited names (control)', () => {
    assert.deepEqual(promiseRows('| promise | code | test |\n| --- | --- | --- |\n| a `x|y` b | `src/a.ts` | `test/b.test.ts` |\n\n| x |'),
      [{ line: '| a `x|y` b | `src/a.ts` | `test/b.test.ts` |', code: ' `src/a.ts` ', test: ' `test/b.test.ts` ' }]);
    assert.deepEqual(citedTestNames('`test/a.test.ts` ("one (1)", "two") and `test/b.test.ts` ("three")'),
      [['test/a.test.ts', 'one (1)'], ['test/a.test.ts', 'two'], ['test/b.test.ts', 'three']]);
    assert.ok(rows.length >= 100, `only ${rows.length} promise rows found: is the table header still | promise | code | test |?`);
  });

  it(`has no line over ${MAX_SECURITY_LINE} characters, here or in docs/security-notes.md`, () => {
    for (const file of ['SECURITY.md', 'docs/security-notes.md']) {
      const long = read(file).split('\n').filter((line) => line.length > MAX_SECURITY_LINE);
      assert.deepEqual(long.map((line) => `${file}: ${line.slice(0, 80)}… (${line.length})`), []);
    }
  });

  it('names, in every promise row, source that exists (src/, or deploy/ and scripts/ for what is not TypeScript) and a test file that exists', () => {
    const problems: string[] = [];
    for (const { line, code, test } of rows) {
      const sources = [...code.matchAll(/`((?:src|deploy|scripts)\/[^`\s]*)`/g)].map((match) => match[1] ?? '');
      const tests = [...test.matchAll(/`(test\/[^`\s]+\.test\.ts)`/g)].map((match) => match[1] ?? '');
      const shown = line.slice(0, 100);
      if (!sources.some((path) => existsSync(join(ROOT, path.includes('*') ? dirname(path) : path)))) problems.push(`${shown}…: no source file that exists`);
      if (!tests.some((path) => existsSync(join(ROOT, path)))) problems.push(`${shown}…: no test file that exists`);
    }
    assert.deepEqual(problems, []);
  });
});

describe('documentation links and paths', () => {
  it('README.md is at most 400 lines', () => {
    const lines = read('README.md').split('\n').length;
    assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines; move reference material to docs/`);
  });

  it('the link checker finds links, anchors and missing files', () => {
    assert.deepEqual(linksOf('see [a](docs/a.md#x) and `[b](c.md)`\n```\n[d](e.md)\n```\n[f](#g "title")'), ['docs/a.md#x', '#g']);
    assert.deepEqual([...anchorsOf("# Where verify's CPU goes: the ladder\n## `--auth none`\n## A\n## A")], ['where-verifys-cpu-goes-the-ladder', '--auth-none', 'a', 'a-1']);
  });

  for (const file of docFiles()) {
    it(`every relative link in ${file} reaches a file, and every anchor a heading`, () => {
      const problems: string[] = [];
      for (const target of linksOf(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
        const [path = '', anchor] = target.split('#', 2);
        const resolved = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path));
        if (!resolved.startsWith(ROOT)) {
          problems.push(`${target}: leaves the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          problems.push(`${target}: no such file ${relative(ROOT, resolved)}`);
          continue;
        }
        if (anchor !== undefined && anchor !== '') {
          if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) problems.push(`${target}: an anchor into a file that is not markdown`);
          else if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) problems.push(`${target}: no heading #${anchor} in ${relative(ROOT, resolved)}`);
        }
      }
      assert.deepEqual(problems, []);
    });

    it(`every src/, test/, deploy/ and scripts/ path named in ${file} exists, with the name given after it`, () => {
      const problems: string[] = [];
      const text = read(file);
      // `src/auth/jwt.ts` `verifyToken`: the path must exist and hold that name.
      for (const match of text.matchAll(/`((?:src|test|deploy|scripts)\/[^`\s]*)`(?:\s+`([A-Za-z_$][\w$.]*)(?:\(\))?`)?/g)) {
        const path = match[1] ?? '';
        const name = match[2];
        if (path.includes('*')) {
          // A pattern such as src/auth/session*: some file in that folder starts with the prefix.
          const folder = join(ROOT, dirname(path));
          const prefix = path.slice(path.lastIndexOf('/') + 1, path.indexOf('*'));
          if (!existsSync(folder) || !readdirSync(folder).some((entry) => entry.startsWith(prefix))) problems.push(`${path}: nothing matches`);
          continue;
        }
        const full = join(ROOT, path);
        if (!existsSync(full)) {
          problems.push(`${path}: no such file`);
          continue;
        }
        if (name !== undefined && statSync(full).isFile()) {
          const last = name.split('.').pop() ?? name;
          if (!readFileSync(full, 'utf8').includes(last)) problems.push(`${path}: does not mention ${name}`);
        }
      }
      // `test/….test.ts` ("a test's name", "another"): that file holds each name (… stands for a value).
      for (const [path, name] of citedTestNames(text)) {
        const full = join(ROOT, path);
        // A name in a single-quoted string has its apostrophes escaped.
        const source = existsSync(full) ? readFileSync(full, 'utf8').replaceAll("\\'", "'") : '';
        const pieces = name.split('…').map((piece) => piece.trim()).filter((piece) => piece !== '');
        if (!pieces.every((piece) => source.includes(piece))) problems.push(`${path}: no test named "${name}"`);
      }
      assert.deepEqual(problems, []);
    });
  }
});

describe('documentation of the command line', () => {
  it('docs/configuration.md lists every setting the service parses, and no other', () => {
    const table = read('docs/configuration.md')
      .split('\n')
      .filter((line) => line.startsWith('| `--') || line.startsWith('| (none)'));
    const documented = { flags: new Set<string>(), envs: new Set<string>() };
    for (const row of table) {
      const [flagCell = '', envCell = ''] = row.split('|').slice(1, 3);
      for (const flag of flagCell.matchAll(/`--([a-z-]+)`/g)) documented.flags.add(flag[1] ?? '');
      for (const env of envCell.matchAll(/`(GATEHOUSE_[A-Z_]+)(?:=[^`]*)?`/g)) documented.envs.add(env[1] ?? '');
    }
    const parsed = { flags: new Set(SETTINGS.map((spec) => spec.flag).filter((flag) => flag !== '')), envs: new Set(SETTINGS.map((spec) => spec.env)) };
    assert.deepEqual([...parsed.flags].filter((flag) => !documented.flags.has(flag)), [], 'settings missing from the table in docs/configuration.md');
    assert.deepEqual([...documented.flags].filter((flag) => !parsed.flags.has(flag)), [], 'flags in docs/configuration.md that gatehouse serve does not take');
    assert.deepEqual([...parsed.envs].filter((env) => !documented.envs.has(env)), [], 'environment variables missing from docs/configuration.md');
    assert.deepEqual([...documented.envs].filter((env) => !parsed.envs.has(env)), [], 'environment variables in docs/configuration.md that the service does not read');
  });

  it('every gatehouse command shown in a code block names a real command and only its flags', () => {
    const commands = new Set(Object.keys(COMMANDS));
    const helpOf: Record<string, string> = {
      serve: SERVE_HELP, users: USERS_HELP, secret: SECRET_HELP, 'flood-token': FLOOD_TOKEN_HELP, doctor: DOCTOR_HELP, tokens: TOKENS_HELP,
      clients: CLIENTS_HELP, keys: KEYS_HELP,
    };
    const usersCommands = new Set([...USERS_HELP.matchAll(/^ {2}([a-z-]+)\b/gm)].map((match) => match[1] ?? ''));
    const problems: string[] = [];
    let checked = 0;
    for (const file of docFiles()) {
      for (const line of codeLines(read(file))) {
        // `gatehouse CMD` where a shell command starts, or `node …dist/cli.js CMD` anywhere.
        const shown = /(?:node\s+\S*dist\/cli\.js|(?:^\s*|[|;&(]\s*|\bsudo\s+)gatehouse)\s+([a-z][a-z-]*)((?:\s+[^\s#|)]+)*)/.exec(line);
        if (shown === null) continue;
        const command = shown[1] ?? '';
        const args = (shown[2] ?? '').trim().split(/\s+/).filter((arg) => arg !== '');
        checked += 1;
        if (!commands.has(command)) {
          problems.push(`${file}: ${line.trim()}: no command ${command}`);
          continue;
        }
        const help = helpOf[command] ?? '';
        if (command === 'users' && !usersCommands.has(args[0] ?? '')) problems.push(`${file}: ${line.trim()}: no users command ${args[0]}`);
        if (command === 'tokens' && !['add', 'list', 'revoke'].includes(args[0] ?? '')) problems.push(`${file}: ${line.trim()}: no tokens command ${args[0]}`);
        if (command === 'secret' && args[0] !== 'rotate') problems.push(`${file}: ${line.trim()}: secret takes rotate`);
        if (command === 'keys' && args[0] !== 'rotate') problems.push(`${file}: ${line.trim()}: keys takes rotate`);
        if (command === 'clients' && !['add', 'edit', 'list', 'remove', 'secret'].includes(args[0] ?? '')) problems.push(`${file}: ${line.trim()}: no clients command ${args[0]}`);
        for (const arg of args) {
          const flag = /^--[a-z-]+/.exec(arg)?.[0];
          if (flag !== undefined && !help.includes(flag)) problems.push(`${file}: ${line.trim()}: gatehouse ${command} has no ${flag}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked >= 10, `only ${checked} commands found in the docs: is the pattern still right?`);
  });
});
