// Every citation in the code, tests and docs points to a file in the repository: a maintainer holding
// only the repository can follow each one. Scanned: src/, test/, scripts/, docs/, deploy/, README.md
// and SECURITY.md. What counts as a citation:
// - a repository path (src/…, test/…, scripts/…, docs/…, deploy/…): it exists (a `*` or a placeholder
//   such as NAME matches something in the folder before it);
// - a bare Markdown file name (deploy.md): it is at the root, in docs/, in docs/contract/ or beside
//   the citing file;
// - a quoted section after a Markdown path (`docs/contract/flood-api.md "Responses"`): a heading of that
//   file, case and backticks ignored;
// - the team's working documents, which are not in the repository, by name or as a spec's numbered
//   section: never, anywhere, strings included (the contract is docs/contract/).
// In JavaScript and TypeScript only comments are read for paths and sections (strings hold test
// fixtures); in every other file, all of it. test/unit/docs-links.test.ts owns the docs' Markdown links
// and their backticked src/, test/, deploy/ and scripts/ paths, so they are not checked twice here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED_FOLDERS = ['src', 'test', 'scripts', 'docs', 'deploy'];
const SCANNED_FILES = ['README.md', 'SECURITY.md'];
const CODE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist']);
/** Where a Markdown file cited by its bare name may live. */
const MARKDOWN_HOMES = ['', 'docs', 'docs/contract'];

// The working documents the contract was first written from. Built from pieces, so that this file
// does not cite them itself.
const OUTSIDE_DOCUMENTS = new RegExp(
  ['\\bINTERFACE\\.md\\b', '\\baccount-auth-interface\\.md\\b', '\\bspec(?:ification)?\\s+(?:sections?|§)\\s*\\d', '\\bspec\\s*§'].join('|'),
  'gi',
);
const REPOSITORY_PATH = /(?<![\w./@-])(?:src|test|scripts|docs|deploy)\/[\w.*${}/-]*/g;
const BARE_MARKDOWN = /(?<![\w./-])[\w-]+\.md\b/g;
/** A Markdown path, then one or more quoted sections, after a space or a comma, the sections apart by commas or "and". */
const SECTION_CITATION = /(?<![\w./-])((?:docs\/[\w./-]+|README|SECURITY)\.md),?((?:(?:\s*,|\s+and)?\s+"[^"\n]+")+)/g;

interface Problem {
  readonly file: string;
  readonly line: number;
  readonly problem: string;
}

function walk(folder: string): string[] {
  const full = join(ROOT, folder);
  if (!existsSync(full)) return [];
  const files: string[] = [];
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) files.push(...walk(path));
    } else if (entry.isFile()) files.push(path);
  }
  return files;
}

function scannedFiles(): string[] {
  return [...SCANNED_FILES.filter((file) => existsSync(join(ROOT, file))), ...SCANNED_FOLDERS.flatMap(walk)].sort();
}

const REGEX_AFTER = new Set([...'(,=:[!&|?{};+-*%<>~^']);
const REGEX_AFTER_WORD = /\b(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;

/**
 * The comments of a JavaScript or TypeScript source, in place: everything else (code, strings,
 * template literals, regular expressions) becomes spaces, line breaks kept, so a match's line is its
 * line in the source.
 */
function commentsOnly(source: string): string {
  const out: string[] = source.split('').map((char) => (char === '\n' ? '\n' : ' '));
  const keep = (from: number, to: number): void => {
    for (let i = from; i < to; i++) out[i] = source[i] ?? ' ';
  };
  // Brace depths of the template literals' `${…}` we are inside; the innermost last.
  const templateDepths: number[] = [];
  let depth = 0;
  let last = ''; // the last significant code character, or a word
  let i = 0;
  const skipQuoted = (quote: string): void => {
    i += 1;
    while (i < source.length && source[i] !== quote && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
    i += 1;
  };
  /** Skips template text up to its end (returns true) or up to a `${` (returns false). */
  const skipTemplateText = (): boolean => {
    while (i < source.length) {
      if (source[i] === '\\') i += 2;
      else if (source[i] === '`') {
        i += 1;
        return true;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        i += 2;
        return false;
      } else i += 1;
    }
    return true;
  };
  while (i < source.length) {
    const char = source[i] ?? '';
    const next = source[i + 1] ?? '';
    if (char === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      keep(i, stop);
      i = stop;
    } else if (char === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      keep(i, stop);
      i = stop;
    } else if (char === '/' && (last === '' || REGEX_AFTER.has(last) || REGEX_AFTER_WORD.test(last))) {
      i += 1;
      let isInClass = false;
      while (i < source.length && source[i] !== '\n' && (isInClass || source[i] !== '/')) {
        if (source[i] === '\\') i += 1;
        else if (source[i] === '[') isInClass = true;
        else if (source[i] === ']') isInClass = false;
        i += 1;
      }
      i += 1;
      last = 'regex';
    } else if (char === '"' || char === "'") {
      skipQuoted(char);
      last = 'string';
    } else if (char === '`') {
      i += 1;
      if (!skipTemplateText()) {
        templateDepths.push(depth);
        depth += 1;
      }
      last = 'string';
    } else if (char === '}' && templateDepths.length > 0 && depth - 1 === templateDepths[templateDepths.length - 1]) {
      // The end of a `${…}`: back into the template's text.
      depth -= 1;
      templateDepths.pop();
      i += 1;
      if (!skipTemplateText()) {
        templateDepths.push(depth);
        depth += 1;
      }
      last = 'string';
    } else {
      if (char === '{') depth += 1;
      else if (char === '}') depth -= 1;
      if (/[A-Za-z_$]/.test(char)) {
        const word = /^[\w$]+/.exec(source.slice(i, i + 64))?.[0] ?? char;
        last = word;
        i += word.length;
        continue;
      }
      if (!/\s/.test(char)) last = char;
      i += 1;
    }
  }
  return out.join('');
}

/** Markdown outside what docs-links.test.ts checks: its links' targets and backticked src/, test/, deploy/, scripts/ paths. */
function markdownForCitations(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\]\([^)\s]*\)/g, (target) => ' '.repeat(target.length))
      .replace(/`(?:src|test|deploy|scripts)\/[^`\s]*`/g, (span) => ' '.repeat(span.length)))
    .join('\n');
}

const normalizedHeading = (text: string): string =>
  text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replaceAll('`', '').replace(/\s+/g, ' ').trim().toLowerCase();

const headingCache = new Map<string, Set<string>>();
/** The headings of a Markdown file outside code blocks, normalized. */
function headingsOf(file: string): Set<string> {
  let headings = headingCache.get(file);
  if (headings === undefined) {
    headings = new Set();
    let isFenced = false;
    for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) isFenced = !isFenced;
      const heading = isFenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (heading !== null) headings.add(normalizedHeading(heading[1] ?? ''));
    }
    headingCache.set(file, headings);
  }
  return headings;
}

/** Whether a cited path exists; a `*` or a placeholder segment (NAME, FILE, `${x}`, `{x}`) matches what its folder holds. */
function pathExists(cited: string): boolean {
  const segments = cited.replace(/[.,:;]+$/, '').split('/');
  const wild = segments.findIndex((segment) => /[*${}]/.test(segment) || /^[A-Z][A-Z_]+$/.test(segment));
  if (wild < 0) return existsSync(join(ROOT, ...segments));
  const folder = join(ROOT, ...segments.slice(0, wild));
  if (!existsSync(folder) || !statSync(folder).isDirectory()) return false;
  const segment = segments[wild] ?? '';
  const prefix = /^[A-Z][A-Z_]+$/.test(segment) ? '' : (/^[\w.-]*/.exec(segment)?.[0] ?? '');
  return readdirSync(folder).some((entry) => entry.startsWith(prefix));
}

function isKnownMarkdown(name: string, citingFile: string): boolean {
  return [...MARKDOWN_HOMES, dirname(citingFile)].some((folder) => existsSync(join(ROOT, folder, name)));
}

/** Every broken citation in `text`, the contents of `file`. */
function citationProblems(file: string, text: string): Problem[] {
  const problems: Problem[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    for (const match of line.matchAll(OUTSIDE_DOCUMENTS)) {
      problems.push({ file, line: index + 1, problem: `cites "${match[0]}", which is not in the repository: cite docs/contract/ instead` });
    }
  });
  const isCode = CODE_EXTENSIONS.has(extname(file));
  const read = isCode ? commentsOnly(text) : file.endsWith('.md') ? markdownForCitations(text) : text;
  read.split('\n').forEach((line, index) => {
    const at = (problem: string): void => {
      problems.push({ file, line: index + 1, problem });
    };
    for (const match of line.matchAll(REPOSITORY_PATH)) {
      const cited = match[0].replace(/[.,:;]+$/, '');
      if (!pathExists(cited)) at(`cites ${cited}, which does not exist`);
    }
    for (const match of line.matchAll(BARE_MARKDOWN)) {
      if (!OUTSIDE_DOCUMENTS.test(match[0]) && !isKnownMarkdown(match[0], file)) at(`cites ${match[0]}, which is not in the repository`);
      OUTSIDE_DOCUMENTS.lastIndex = 0;
    }
    for (const match of line.matchAll(SECTION_CITATION)) {
      const cited = match[1] ?? '';
      if (!pathExists(cited)) continue; // reported above as a path
      const headings = headingsOf(cited);
      for (const section of (match[2] ?? '').matchAll(/"([^"\n]+)"/g)) {
        if (!headings.has(normalizedHeading(section[1] ?? ''))) at(`cites section "${section[1]}" of ${cited}, which has no such heading`);
      }
    }
  });
  return problems;
}

const shown = (problems: readonly Problem[]): string[] => problems.map(({ file, line, problem }) => `${file}:${line}: ${problem}`);

describe('citations', () => {
  it('reads only the comments of code: strings, template literals and regular expressions are blanked (control)', () => {
    const source = [
      "const a = 'docs/a.md'; // see docs/b.md",
      'const b = `x ${"y" + `z ${1}`} docs/c.md`; /* docs/d.md',
      ' * docs/e.md */ const r = /\\/\\/ docs\\/f.md/g; const q = a / 2; // docs/g.md',
    ].join('\n');
    const comments = commentsOnly(source).split('\n').map((line) => line.trim());
    assert.equal(comments[0], '// see docs/b.md');
    assert.equal(comments[1], '/* docs/d.md');
    assert.match(comments[2] ?? '', /^\* docs\/e\.md \*\/\s+\/\/ docs\/g\.md$/);
  });

  it('finds each kind of broken citation, and passes good ones (control)', () => {
    const outside = ['INTERFACE', '.md'].join('');
    const numbered = ['spec', ' section 5'].join('');
    const code = [
      `// ${outside} "Values"; ${numbered}.2`,
      "it('answers as " + outside + " says', () => {});",
      '// docs/contract/nothing.md, src/no-such-file.ts, src/auth/, src/auth/session*, test/suites/NAME/x.test.ts',
      '// README.md "Quick start"; docs/security-notes.md, "Login storms"; docs/security-notes.md "No such heading"',
      '// missing-guide.md, deploy.md',
    ].join('\n');
    assert.deepEqual(shown(citationProblems('src/example.ts', code)), [
      `src/example.ts:1: cites "${outside}", which is not in the repository: cite docs/contract/ instead`,
      `src/example.ts:1: cites "${numbered}", which is not in the repository: cite docs/contract/ instead`,
      `src/example.ts:2: cites "${outside}", which is not in the repository: cite docs/contract/ instead`,
      'src/example.ts:3: cites docs/contract/nothing.md, which does not exist',
      'src/example.ts:3: cites src/no-such-file.ts, which does not exist',
      'src/example.ts:4: cites section "No such heading" of docs/security-notes.md, which has no such heading',
      'src/example.ts:5: cites missing-guide.md, which is not in the repository',
    ]);
    // In Markdown all of it is read, but links and backticked code paths are docs-links.test.ts's.
    const markdown = '[x](../nowhere.md) `src/nowhere.ts` `docs/nowhere.md` docs/security-notes.md "Login storms"';
    assert.deepEqual(shown(citationProblems('docs/example.md', markdown)), ['docs/example.md:1: cites docs/nowhere.md, which does not exist']);
  });

  it('scans every file it should', () => {
    const files = scannedFiles();
    for (const file of ['README.md', 'SECURITY.md', 'src/auth/access.ts', 'test/unit/citations.test.ts', 'scripts/sizes.mjs', 'deploy/nginx/flood.conf']) {
      assert.ok(files.includes(file), `${file} is not scanned`);
    }
  });

  it('every citation in src/, test/, scripts/, docs/, deploy/, README.md and SECURITY.md points to a file in the repository', () => {
    const problems = scannedFiles().flatMap((file) => citationProblems(file, readFileSync(join(ROOT, file), 'utf8')));
    assert.equal(problems.length, 0, `${problems.length} broken citations:\n${shown(problems).join('\n')}`);
  });
});
