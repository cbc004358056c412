// Characters a terminal or an editor acts on, or shows as nothing, which JSON.stringify leaves as
// they are: DEL and the C1 controls (U+0080-U+009F; U+009B is CSI, an escape sequence on its
// own in many terminals), the line and paragraph separators U+2028 and U+2029, every format
// character (Unicode category Cf: the bidirectional marks, embeddings, overrides and isolates
// of "Trojan Source", zero-width space and joiners, the byte-order mark, the soft hyphen, the
// word joiner, tags, ...), and the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 (letters
// that show as blank). The invisible ones let two usernames that look the same differ, so a log
// or `users list` must show them. C0 controls are escaped by JSON.stringify already.
const UNSAFE = /[\u007f-\u009f\u2028\u2029\p{Cf}\u115f\u1160\u3164\uffa0]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** Each UTF-16 unit as \uXXXX: an astral character (a tag, say) becomes its two halves, which JSON reads back as it. */
const escapeOne = (char: string): string => {
  let text = '';
  for (let i = 0; i < char.length; i++) text += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return text;
};

/** `text` with every such character written as \uXXXX; the same string when there is none (the common case costs one regex test). */
export function escapeUnsafeCharacters(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text;
}

/** JSON.stringify of a string, with those characters escaped too: still valid JSON for the same string. */
export function quoteForLog(value: string): string {
  return escapeUnsafeCharacters(JSON.stringify(value));
}
