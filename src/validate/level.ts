import { oneOf, type CheckedType } from './check.js';

// docs/contract/flood-api.md "Values": levels arrive as 10 / "ADMINISTRATOR" or 5 / "USER" and read back in the
// form they were written. Everything that decides access goes through `roleOf`.
export const checkAccessLevel = oneOf([10, 5, 'ADMINISTRATOR', 'USER'] as const);
export type AccessLevel = CheckedType<typeof checkAccessLevel>;

type Role = 'administrator' | 'user';

export function roleOf(level: AccessLevel): Role {
  return level === 10 || level === 'ADMINISTRATOR' ? 'administrator' : 'user';
}

export function isAdministrator(level: AccessLevel): boolean {
  return roleOf(level) === 'administrator';
}
