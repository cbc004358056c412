// Where the table the server reads (src/auth/access.ts ACCESS) and the written policy
// (test/policy/access-policy.ts) disagree, column by column: either side looser or stricter, a row
// without a rule, a rule without a row.
import type { AccessRow } from '../../src/auth/access.js';
import { POLICY, type Rule } from './access-policy.js';

/** Each column of the table, with the policy's name for it. */
export const COMPARED_COLUMNS = Object.freeze([
  ['method', 'method'],
  ['path', 'path'],
  ['caller', 'who'],
  ['urlToken', 'urlToken'],
  ['machineToken', 'machineToken'],
  ['factors', 'factors'],
  ['password', 'password'],
  ['adminTwoFactor', 'adminTwoFactor'],
  ['crossSite', 'crossSite'],
  ['body', 'body'],
  ['origin', 'origin'],
] as const satisfies ReadonlyArray<readonly [keyof AccessRow, keyof Rule]>);

const show = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : String(value));

/** One line per disagreement, naming the row and the column; empty when the two say the same. */
export function policyDifferences(
  table: Readonly<Record<string, AccessRow>>,
  policy: Readonly<Record<string, Rule>> = POLICY,
): string[] {
  const differences: string[] = [];
  for (const [action, row] of Object.entries(table)) {
    const written = policy[action];
    if (written === undefined) {
      differences.push(`${action}: the table has this row, and test/policy/access-policy.ts no rule for it`);
      continue;
    }
    for (const [column, policyColumn] of COMPARED_COLUMNS) {
      if (row[column] !== written[policyColumn]) {
        differences.push(`${action}.${column}: the table says ${show(row[column])}, the policy ${show(written[policyColumn])}`);
      }
    }
  }
  for (const action of Object.keys(policy)) {
    if (!Object.hasOwn(table, action)) differences.push(`${action}: the policy has a rule, and the table no row for it`);
  }
  return differences;
}
