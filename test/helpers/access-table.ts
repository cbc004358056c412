// The access table (src/auth/access.ts) as SECURITY.md prints it. To print it after changing a row:
//   node --import tsx -e "import('./test/helpers/access-table.ts').then((m) => console.log(m.renderedTable()))"
import { ACCESS, ACTIONS, type AccessRow } from '../../src/auth/access.js';

const WHO: Readonly<Record<AccessRow['caller'], string>> = {
  anyone: 'anyone',
  optional: 'anyone; the session if there is one',
  account: 'a session of the account',
  administrator: 'an administrator',
  'first-or-administrator': 'anyone while no account exists, then an administrator',
  gate: 'a session or a machine token',
  proxy: 'the authenticating proxy (or loopback)',
};
const FACTORS: Readonly<Record<AccessRow['factors'], string>> = {
  one: 'any',
  'two-once-enrolled': 'two, once the account has a second factor',
  asked: 'as the forward URL asks',
};
const BODY: Readonly<Record<AccessRow['body'], string>> = {
  none: 'none', flood: 'as the spec says', json: 'JSON (415 otherwise)', form: 'a form, read strictly (400 otherwise)',
};
const yes = (value: boolean): string => (value ? 'yes' : '—');

/** Where the row answers (judged first): every origin, or Gatehouse's own, and for the Flood endpoints a Flood origin too. */
function originOf(row: AccessRow): string {
  if (row.origin === 'any') return 'any';
  const where = row.body === 'flood' ? 'home, Flood' : 'home';
  return row.caller === 'first-or-administrator' ? `${where}; any while no account exists` : where;
}

/** The table as SECURITY.md prints it. */
export function renderedTable(): string {
  const lines = [
    '| action | request | origin | who | `?token=` | machine token | factors | current password | `--require-mfa-for-admins` | from another site | body |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const action of ACTIONS) {
    const row: AccessRow = ACCESS[action];
    const request = row.path === '/healthz' ? `${row.method} ${row.path}` : `${row.method} {base}${row.path}`;
    lines.push(`| \`${action}\` | \`${request}\` | ${originOf(row)} | ${WHO[row.caller]} | ${yes(row.urlToken)} | ${yes(row.machineToken)} | ${FACTORS[row.factors]} | ${yes(row.password)} | ${row.adminTwoFactor ? 'applies' : '—'} | ${row.crossSite} | ${BODY[row.body]} |`);
  }
  return lines.join('\n');
}

