// Characters a terminal or an editor acts on, or shows as nothing, which JSON.stringify leaves as
// they are (it escapes C0 controls already): DEL and the C1 controls (U+009B is CSI on its own),
// U+2028 and U+2029, every format character (category Cf: the bidi controls of "Trojan Source",
// zero-width characters, the BOM, tags, ...) and the blank Hangul fillers. The invisible ones let
// two usernames that look the same differ, so a log or `users list` must show them.
const UNSAFE = /[\u007f-\u009f\u2028\u2029\p{Cf}\u115f\u1160\u3164\uffa0]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** Each UTF-16 unit as \uXXXX: an astral character (a tag) becomes its two halves, which JSON reads back as it. */
const escapeOne = (char: string): string =>
  char.replace(/[^]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `text` with every such character written as \uXXXX; the same string when there is none (the common case costs one regex test). */
export function escapeUnsafeCharacters(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text;
}

/** JSON.stringify of a string, with those characters escaped too: still valid JSON for the same string. */
export function quoteForLog(value: string): string {
  return escapeUnsafeCharacters(JSON.stringify(value));
}
