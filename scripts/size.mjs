// `npm run size`: what a deployment loads and runs (scripts/sizes.mjs `measure`), then the non-blank
// lines of every folder of src/ (the core's, then the features', then the composition) and of each of
// its files; exits 1 when a file is over the limit.
//   node scripts/size.mjs --update-reading-list   writes today's numbers into SECURITY.md's reading
//                                                 list (its words are left as they are)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRIES, FILE_LIMIT, measure, OFF_BY_DEFAULT } from './sizes.mjs';

const root = new URL('..', import.meta.url).pathname;
const sizes = measure(root);
const { folders, total, files, deployment } = sizes;

/** SECURITY.md with the numbers of its reading list's rows replaced by `sizes`'. */
function withNumbers(text) {
  const numbers = new Map([
    ['loaded', [deployment.loaded.files, deployment.loaded.lines]],
    ['serve', [deployment.service.files, deployment.service.lines]],
    ['default', [deployment.byDefault.files, deployment.byDefault.lines]],
  ]);
  const folderNumbers = new Map(folders.map((folder) => [`\`${folder.name}\``, [folder.lines, folder.serviceLines]]));
  const shown = (value) => value.toLocaleString('en');
  return text.split('\n').map((line) => {
    const cells = line.split(' | ');
    const key = cells[0]?.slice(2);
    if (!line.startsWith('| ') || key === undefined) return line;
    // A deployment row ends with files and lines; a folder row with lines, lines imported by serve, and whether it runs.
    if (numbers.has(key) && cells.length === 4) return [...cells.slice(0, 2), ...numbers.get(key).map(shown)].join(' | ') + ' |';
    if (folderNumbers.has(key) && cells.length === 6) return [...cells.slice(0, 3), ...folderNumbers.get(key).map(shown), cells[5]].join(' | ');
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

console.log(`${count(deployment.loaded.lines)}  loaded by gatehouse serve: ${deployment.loaded.files} of ${files} files (imported from ${ENTRIES.loaded.join(', ')})`);
console.log(`${count(deployment.service.lines)}  the serve command can run: ${deployment.service.files} files (imported from ${ENTRIES.service.join(', ')})`);
console.log(`${count(deployment.byDefault.lines)}  runs with no settings: ${deployment.byDefault.files} files (less ${OFF_BY_DEFAULT.map(({ path, offUnless }) => `${path}, off without ${offUnless}`).join('; ')})`);
for (const part of ['core', 'feature', 'composition']) {
  const own = folders.filter((folder) => folder.part === part);
  console.log(`\n${count(own.reduce((sum, folder) => sum + folder.lines, 0))}  ${part === 'feature' ? 'the features' : part === 'core' ? 'the core' : 'the composition'}`);
  for (const folder of own) {
    const served = folder.serviceLines === folder.lines ? '' : `, ${folder.serviceLines} of them imported by serve`;
    console.log(`${count(folder.lines)}    ${folder.name}${served}${folder.offUnless === undefined ? '' : `, off without ${folder.offUnless}`}`);
    for (const { file, lines } of folder.files) {
      console.log(`${count(lines)}      ${file}${lines > FILE_LIMIT ? `  over ${FILE_LIMIT}` : ''}`);
      if (lines > FILE_LIMIT) problems.push(`${file} has ${lines} non-blank lines, over ${FILE_LIMIT}`);
    }
  }
}
console.log(`\n${count(total)}  in all`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exitCode = 1;
}
