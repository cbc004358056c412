import type { Problem } from '../errors.js';

export type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problems: Problem[] };
export type Checker<T> = (input: unknown, path: string) => Checked<T>;
export type CheckedType<C> = C extends Checker<infer T> ? T : never;

export function pass<T>(value: T): Checked<T> {
  return { ok: true, value };
}

export function fail(path: string, message: string): Checked<never> {
  return { ok: false, problems: [{ path, message }] };
}

/** A JSON object: not null, not an array, with the plain or null prototype. */
export function isPlainObject(input: unknown): input is Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  const proto: unknown = Object.getPrototypeOf(input);
  return proto === Object.prototype || proto === null;
}

export function joinPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

// U+0000-U+001F and U+007F: docs/contract/flood-api.md "Values", username.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
// With the u flag a surrogate pair is one code point, so this matches only a lone surrogate.
// It has no UTF-8 form: as UTF-8 (hashing, file names, paths) it becomes U+FFFD, so two
// different passwords would hash alike, and a username could never be named in a path.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

type StringRules = { minLength: number; maxLength: number; allowControlCharacters?: boolean };

export function stringOf(rules: StringRules): Checker<string> {
  return (input, path) => {
    if (typeof input !== 'string') return fail(path, 'must be a string');
    if (LONE_SURROGATE.test(input)) return fail(path, 'must not contain a lone surrogate (not valid Unicode)');
    // In code points, so a limit in "characters" is not halved by surrogate pairs.
    let length = 0;
    for (const _ of input) length++;
    if (length < rules.minLength) {
      return fail(path, rules.minLength === 1 ? 'must not be empty' : `must be at least ${rules.minLength} characters`);
    }
    if (length > rules.maxLength) return fail(path, `must be at most ${rules.maxLength} characters`);
    if (rules.allowControlCharacters !== true && CONTROL_CHARACTER.test(input)) {
      return fail(path, 'must not contain control characters');
    }
    return pass(input);
  };
}

export function integerIn(min: number, max: number): Checker<number> {
  return (input, path) => {
    if (typeof input !== 'number' || !Number.isInteger(input)) return fail(path, 'must be an integer');
    if (input < min || input > max) return fail(path, `must be between ${min} and ${max}`);
    return pass(input);
  };
}

/** Unix seconds, as every time in the users file. */
export const unixSeconds = integerIn(0, Number.MAX_SAFE_INTEGER);

export const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The bytes of unpadded base64url `text`, or undefined unless it is in its one canonical spelling. */
export function decodeBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** Unpadded base64url of 1 to `maxBytes` bytes, in its one canonical spelling, as the bytes. */
export function base64urlBytes(maxBytes: number): Checker<Buffer> {
  const maxLength = Math.ceil((maxBytes * 4) / 3);
  return (input, path) => {
    if (typeof input !== 'string' || input.length === 0 || input.length > maxLength || !BASE64URL.test(input)) {
      return fail(path, `must be base64url of at most ${maxBytes} bytes`);
    }
    const bytes = decodeBase64url(input);
    return bytes === undefined ? fail(path, 'must be canonical base64url') : pass(bytes);
  };
}

/** Records stored under an account: 1 to `max` (the field is absent when none), each frozen, ids distinct. */
export function storedList<T extends { id: string }>(check: Checker<T>, max: number, what: string, idName: string) {
  return (input: unknown, path: string): Checked<readonly Readonly<T>[]> => {
    if (!Array.isArray(input) || input.length === 0 || input.length > max) {
      return fail(path, `must be an array of 1 to ${max} ${what}`);
    }
    const records: Readonly<T>[] = [];
    const ids = new Set<string>();
    for (const [index, item] of input.entries()) {
      const result = check(item, `${path}[${index}]`);
      if (!result.ok) return result;
      if (ids.has(result.value.id)) return fail(`${path}[${index}].id`, `repeats a ${idName}`);
      ids.add(result.value.id);
      records.push(Object.freeze(result.value));
    }
    return pass(Object.freeze(records));
  };
}

/** A string matching `format`, else the problem "is not `what`". */
export function matching(format: RegExp, what: string): Checker<string> {
  return (input, path) =>
    typeof input === 'string' && format.test(input) ? pass(input) : fail(path, `is not ${what}`);
}

export function oneOf<const T extends string | number>(allowed: readonly T[]): Checker<T> {
  return (input, path) => {
    for (const candidate of allowed) if (input === candidate) return pass(candidate);
    return fail(path, `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`);
  };
}

/** A checker objectOf treats as optional: the key may be absent (and is then absent from the output too). */
type OptionalChecker<T> = Checker<T> & { readonly isOptional: true };

/** Marks a field of an objectOf shape as optional. */
export function optional<T>(check: Checker<T>): OptionalChecker<T> {
  return Object.assign((input: unknown, path: string) => check(input, path), { isOptional: true as const });
}

type Shape = Readonly<Record<string, Checker<unknown>>>;
type RequiredKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { readonly isOptional: true } ? never : K;
}[keyof S];
type OptionalKeys<S extends Shape> = Exclude<keyof S, RequiredKeys<S>>;
type ShapeValue<S extends Shape> =
  { [K in RequiredKeys<S>]: CheckedType<S[K]> } & { [K in OptionalKeys<S>]?: CheckedType<S[K]> } extends infer O
  ? { [K in keyof O]: O[K] }
  : never;
type PartialShapeValue<S extends Shape> = { [K in keyof S]?: CheckedType<S[K]> };

/**
 * Checks an object against a shape. Unknown keys are stripped (docs/contract/flood-api.md "Values",
 * unknown fields) unless `rejectUnknownKeys`; the output is built from the shape's keys only.
 */
export function objectOf<S extends Shape>(
  shape: S, options: { rejectUnknownKeys?: boolean } = {},
): Checker<ShapeValue<S>> {
  return (input, path) =>
    checkObject(shape, input, path, false, options.rejectUnknownKeys === true) as Checked<ShapeValue<S>>;
}

/** Like objectOf, but every key is optional (a partial update). */
export function partialObjectOf<S extends Shape>(shape: S): Checker<PartialShapeValue<S>> {
  return (input, path) => checkObject(shape, input, path, true, false) as Checked<PartialShapeValue<S>>;
}

function checkObject(
  shape: Shape, input: unknown, path: string, isPartial: boolean, rejectUnknownKeys: boolean,
): Checked<Record<string, unknown>> {
  if (!isPlainObject(input)) return fail(path, 'must be a JSON object');
  const problems: Problem[] = [];
  const output: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(shape)) {
    const keyPath = joinPath(path, key);
    if (!Object.hasOwn(input, key)) {
      const isOptional = (check as Partial<OptionalChecker<unknown>>).isOptional === true;
      if (!isPartial && !isOptional) problems.push({ path: keyPath, message: 'is required' });
      continue;
    }
    const result = check(input[key], keyPath);
    if (result.ok) output[key] = result.value;
    else problems.push(...result.problems);
  }
  if (rejectUnknownKeys) {
    for (const key of Object.keys(input)) {
      if (!Object.hasOwn(shape, key)) problems.push({ path: joinPath(path, key), message: 'is not an allowed field' });
    }
  }
  return problems.length === 0 ? pass(output) : { ok: false, problems };
}
