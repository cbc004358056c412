// `npm run size`: the non-blank lines of every unit of src/ (scripts/units.mjs) and of each of its
// files, with the limits; exits 1 when a limit is broken or a file is in no unit or in two.
import { CORE_LIMIT, FILE_LIMIT, measure } from './units.mjs';

const root = new URL('..', import.meta.url).pathname;
const { units, unclaimed, claimedTwice, total } = measure(root);
const problems = [];
const count = (lines) => String(lines).padStart(6);

for (const unit of units) {
  const limit = unit.name === 'core' ? ` (at most ${CORE_LIMIT})` : '';
  console.log(`${count(unit.lines)}  ${unit.name}${limit}`);
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
