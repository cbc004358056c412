// Characters a terminal or an editor acts on rather than shows, which JSON.stringify leaves as
// they are: DEL and the C1 controls (U+0080-U+009F; U+009B is CSI, an escape sequence on its
// own in many terminals), the bidirectional marks, embeddings, overrides and isolates (U+061C,
// U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: "Trojan Source"), and the line and paragraph
// separators U+2028 and U+2029. C0 controls are escaped by JSON.stringify already.
const UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

const escapeOne = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every such character written as \uXXXX; the same string when there is none (the common case costs one regex test). */
export function escapeUnsafeCharacters(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text;
}

/** JSON.stringify of a string, with those characters escaped too: still valid JSON for the same string. */
export function quoteForLog(value: string): string {
  return escapeUnsafeCharacters(JSON.stringify(value));
}
