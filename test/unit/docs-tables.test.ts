// The documentation's tables hold together and README's commands are real: every Markdown table
// row in README.md, SECURITY.md, docs/*.md and docs/contract/*.md has as many cells as its header (a row with one cell
// too many or too few renders as a different table, or as text), every `npm run NAME` and
// `npm test` README shows is a script of package.json, and README's table of test commands names
// every `test:*` script there is.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const markdownIn = (folder: string): string[] =>
  readdirSync(join(ROOT, folder)).filter((name) => name.endsWith('.md')).sort().map((name) => join(folder, name));
const docFiles = (): string[] => ['README.md', 'SECURITY.md', ...markdownIn('docs'), ...markdownIn('docs/contract')];

/** The cells of one table line; a `|` inside a code span or escaped as `\|` is text, not a border. */
function cellsOf(line: string): string[] {
  const text = line.trim().replace(/\\\|/g, '\u0000').replace(/`[^`]*`/g, (span) => span.replaceAll('|', '\u0000'));
  return text.replace(/^\|/, '').replace(/\|$/, '').split('|');
}

/** Each table line whose cell count differs from its header's, as `line N: …`. */
function misshapenRows(text: string): string[] {
  const problems: string[] = [];
  let headerCells = 0;
  let isFenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) isFenced = !isFenced;
    if (isFenced || !line.trim().startsWith('|')) {
      headerCells = 0;
      return;
    }
    const cells = cellsOf(line).length;
    if (headerCells === 0) headerCells = cells;
    else if (cells !== headerCells) problems.push(`line ${index + 1}: ${cells} cells, the header has ${headerCells}: ${line.slice(0, 120)}`);
  });
  return problems;
}

const scripts = (): Record<string, string> => (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

describe('documentation tables and README commands', () => {
  it('the row checker counts cells and finds a row out of shape (control)', () => {
    assert.deepEqual(cellsOf('| `a|b` | c \\| d | e |'), [' `a\u0000b` ', ' c \u0000 d ', ' e ']);
    assert.deepEqual(misshapenRows('| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| x |\n| --- |\n| 1 |'), []);
    assert.deepEqual(misshapenRows('| a | b |\n| --- | --- |\n| 1 | 2 | 3 |\n| 4 |').length, 2);
  });

  for (const file of docFiles()) {
    it(`every table row in ${file} has as many cells as its header`, () => {
      assert.deepEqual(misshapenRows(read(file)), []);
    });
  }

  it('every npm command README.md shows is a script of package.json', () => {
    const shown = [...read('README.md').matchAll(/npm (?:run ([a-z][\w:-]*)|(test|start)\b)/g)].map((match) => match[1] ?? match[2] ?? '');
    assert.ok(shown.includes('test') && shown.includes('test:proxies'), 'the finder sees npm test and npm run test:proxies');
    assert.deepEqual(shown.filter((name) => scripts()[name] === undefined), []);
  });

  it("README.md's table of test commands names every test:* script", () => {
    const table = read('README.md').split('\n').filter((line) => line.startsWith('| `npm'));
    const listed = table.map((line) => /^\| `npm (?:run )?([\w:-]+)`/.exec(line)?.[1]);
    const missing = Object.keys(scripts()).filter((name) => (name === 'test' || name.startsWith('test:')) && !listed.includes(name));
    assert.deepEqual(missing, []);
  });
});
