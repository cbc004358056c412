// `npm run size`: what a deployment loads and runs (scripts/units.mjs `measure`), then the non-blank
// lines of every unit of src/ and of each of its files, with the limits; exits 1 when a limit is
// broken or a file is in no unit or in two.
//   node scripts/size.mjs --update-reading-list   writes today's numbers into SECURITY.md's reading
//                                                 list (its words are left as they are)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_LIMIT, ENTRIES, FILE_LIMIT, measure } from './units.mjs';

const root = new URL('..', import.meta.url).pathname;
const sizes = measure(root);
const { units, unclaimed, claimedTwice, total, files, deployment } = sizes;

/** SECURITY.md with the numbers of its reading list's rows replaced by `sizes`'. */
function withNumbers(text) {
  const numbers = new Map([
    ['loaded', [deployment.loaded.files, deployment.loaded.lines]],
    ['serve', [deployment.service.files, deployment.service.lines]],
    ['default', [deployment.byDefault.files, deployment.byDefault.lines]],
  ]);
  const unitNumbers = new Map(units.map((unit) => [unit.name, [unit.lines, unit.serviceLines]]));
  const shown = (value) => value.toLocaleString('en');
  return text.split('\n').map((line) => {
    const cells = line.split(' | ');
    const key = cells[0]?.slice(2);
    if (!line.startsWith('| ') || key === undefined) return line;
    // A deployment row ends with files and lines; a unit row with lines, lines imported by serve, and whether it runs.
    if (numbers.has(key) && cells.length === 4) return [...cells.slice(0, 2), ...numbers.get(key).map(shown)].join(' | ') + ' |';
    if (unitNumbers.has(key) && cells.length === 6) return [...cells.slice(0, 3), ...unitNumbers.get(key).map(shown), cells[5]].join(' | ');
    return line;
  }).join('\n');
}

if (process.argv.includes('--update-reading-list')) {
  const file = join(root, 'SECURITY.md');
  writeFileSync(file, withNumbers(readFileSync(file, 'utf8')));
  console.log('SECURITY.md: the reading list\'s numbers are today\'s');
}
const problems = [];
const count = (lines) => String(lines).padStart(6);

console.log(`${count(deployment.loaded.lines)}  loaded by gatehouse serve: ${deployment.loaded.files} of ${files} files (imported from ${ENTRIES.loaded})`);
console.log(`${count(deployment.service.lines)}  the serve command can run: ${deployment.service.files} files (imported from ${ENTRIES.service})`);
console.log(`${count(deployment.byDefault.lines)}  runs with no settings: ${deployment.byDefault.files} files (less ${units.filter((unit) => unit.offUnless !== undefined).map((unit) => `${unit.name}, off without ${unit.offUnless}`).join('; ')})`);
console.log('');
for (const unit of units) {
  const limit = unit.name === 'core' ? ` (at most ${CORE_LIMIT})` : '';
  const served = unit.serviceLines === unit.lines ? '' : `, ${unit.serviceLines} of them imported by serve`;
  console.log(`${count(unit.lines)}  ${unit.name}${limit}${served}${unit.offUnless === undefined ? '' : `, off without ${unit.offUnless}`}`);
  for (const { file, lines } of unit.files) {
    console.log(`${count(lines)}    ${file}${lines > FILE_LIMIT ? `  over ${FILE_LIMIT}` : ''}`);
    if (lines > FILE_LIMIT) problems.push(`${file} has ${lines} non-blank lines, over ${FILE_LIMIT}`);
  }
  if (unit.name === 'core' && unit.lines > CORE_LIMIT) problems.push(`the core has ${unit.lines} non-blank lines, over ${CORE_LIMIT}`);
}
console.log(`${count(total)}  in all`);
for (const file of unclaimed) problems.push(`${file} is in no unit: name it in scripts/units.mjs`);
for (const file of claimedTwice) problems.push(`${file} is in more than one unit (scripts/units.mjs)`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exitCode = 1;
}
