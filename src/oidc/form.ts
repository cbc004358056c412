import { isUtf8 } from 'node:buffer';

// application/x-www-form-urlencoded, as OAuth 2.0 reads it (RFC 6749 appendix B, section 3.1): the
// token, revocation and authorize requests' parameters, from a body or a query string. Strict where
// http/query.ts is lenient: a bad escape or a repeated parameter refuses the whole request instead of
// guessing which value was meant, since a parameter smuggled in twice is how confusion attacks start.

/** More than any request of ours holds; bounds the work before anything is checked. */
export const MAX_FORM_PAIRS = 64;
/** Every parameter we read has a name of at most this many characters. */
const MAX_NAME_LENGTH = 64;

export type FormParameters = ReadonlyMap<string, string>;
type FormParse = { readonly ok: true; readonly parameters: FormParameters } | { readonly ok: false; readonly problem: string };

const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
// A serializer percent-encodes everything else (the WHATWG URL standard's form encoder does): raw
// spaces, control characters or non-ASCII are not a form, whatever a lenient parser would make of them.
const FORM_CHARACTERS = /^[\x21-\x7e]*$/;

/** The text of one name or value: `+` is a space, each run of `%XX` bytes must be UTF-8; undefined when not. */
export function decodeFormComponent(text: string): string | undefined {
  if (!text.includes('%')) return text.includes('+') ? text.replaceAll('+', ' ') : text;
  const spaced = text.replaceAll('+', ' ');
  // Every % must start an escape: "%zz", "%4" and a lone "%" are refused, never kept as they are.
  if (spaced.replace(ESCAPE_RUN, '').includes('%')) return undefined;
  let isValid = true;
  const decoded = spaced.replace(ESCAPE_RUN, (run) => {
    const bytes = Buffer.from(run.replaceAll('%', ''), 'hex');
    if (!isUtf8(bytes)) isValid = false;
    return bytes.toString('utf8');
  });
  return isValid ? decoded : undefined;
}

/**
 * Parses `text` (a body decoded as UTF-8, or a query string without "?"). RFC 6749 section 3.1: a
 * parameter sent without a value is treated as omitted; one sent twice refuses the request. Refused
 * too: more than MAX_FORM_PAIRS pairs, a name longer than 64 characters, characters other than
 * visible ASCII, a bad escape, escapes that are not UTF-8. Never throws.
 */
export function parseForm(text: string): FormParse {
  const parameters = new Map<string, string>();
  if (text === '') return { ok: true, parameters };
  if (!FORM_CHARACTERS.test(text)) return { ok: false, problem: 'characters a form encodes' };
  const pairs = text.split('&');
  if (pairs.length > MAX_FORM_PAIRS) return { ok: false, problem: `more than ${MAX_FORM_PAIRS} parameters` };
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    // "a" and "a=" carry no value: omitted. An empty pair ("a=1&&b=2") is nothing at all.
    if (equals < 0 || equals === pair.length - 1) {
      if (decodeFormComponent(equals < 0 ? pair : pair.slice(0, equals)) === undefined) return { ok: false, problem: 'a bad escape' };
      continue;
    }
    const name = decodeFormComponent(pair.slice(0, equals));
    const value = decodeFormComponent(pair.slice(equals + 1));
    if (name === undefined || value === undefined) return { ok: false, problem: 'a bad escape' };
    if (name === '' || name.length > MAX_NAME_LENGTH) return { ok: false, problem: 'a parameter without a proper name' };
    if (parameters.has(name)) return { ok: false, problem: `the parameter ${name.replace(/[^\x21-\x7e]/g, '?')} more than once` };
    parameters.set(name, value);
  }
  return { ok: true, parameters };
}

/** The media type of a form body: application/x-www-form-urlencoded, with at most a UTF-8 charset. */
export function isFormContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [mediaType = '', ...parameters] = header.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/x-www-form-urlencoded') return false;
  return parameters.every((parameter) => {
    const [name = '', value = ''] = parameter.split('=');
    return name.trim().toLowerCase() === 'charset' && /^"?utf-8"?$/i.test(value.trim());
  });
}
