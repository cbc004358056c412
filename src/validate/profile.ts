import { fail, matching, pass, stringOf, type Checker } from './check.js';

// docs/contract/oidc.md "Accounts": an optional e-mail address and display name,
// which apps signed in through Gatehouse receive as the `email` and `name` claims, and `sub`, the
// random subject identifier they know the account by.

/** RFC 5321 section 4.5.3.1.3: a path is at most 256 octets, so an address at most 254 characters. */
const MAX_EMAIL_LENGTH = 254;
const MAX_DISPLAY_NAME_LENGTH = 128;

const checkEmailText = stringOf({ minLength: 3, maxLength: MAX_EMAIL_LENGTH });
// One "@" with something on each side, no white space: what every app's own check lets through.
// Deliverability is not ours to judge; nothing is sent to the address.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/u;

/** An e-mail address: 3 to 254 characters, one `@` with text on each side, no white space or control character. */
export const checkEmail: Checker<string> = (input, path) => {
  const result = checkEmailText(input, path);
  if (!result.ok) return result;
  return EMAIL_SHAPE.test(result.value) ? pass(result.value) : fail(path, 'must be an e-mail address such as ada@example.org');
};

/** A display name: 1 to 128 characters, no control character, not only white space. */
export const checkDisplayName: Checker<string> = (input, path) => {
  const result = stringOf({ minLength: 1, maxLength: MAX_DISPLAY_NAME_LENGTH })(input, path);
  if (result.ok && result.value.trim() === '') return fail(path, 'must not be only white space');
  return result;
};

/** 128 random bits, base64url: made once per account, kept through renames, never reused. */
const SUBJECT_FORMAT = /^[A-Za-z0-9_-]{22}$/;
export const checkSubject = matching(SUBJECT_FORMAT, 'a subject identifier');
