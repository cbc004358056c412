import { isIP } from 'node:net';

// RFC 1123 section 2.1: letters, digits and inner hyphens, 1-63 per label, 253 in all. A last
// label of digits only is refused: the WHATWG URL parser reads such a name as an IPv4 address.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DIGITS = /^[0-9]+$/;

/** True for a plain DNS name, already lower-cased: no scheme, port, path, wildcard or trailing dot. */
export function isDnsName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  return labels.every((label) => LABEL.test(label)) && !DIGITS.test(labels[labels.length - 1] ?? '');
}

/**
 * A host name as the WHATWG URL parser writes `url.hostname` (lower case, IPv6 in brackets), or
 * undefined when `text` is not a plain DNS name or IP literal. Punycode is the operator's job.
 */
export function normalizeHostName(text: string): string | undefined {
  const name = text.trim().toLowerCase();
  if (isIP(name) === 4) return name;
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare) === 6) return `[${bare}]`;
  return isDnsName(name) ? name : undefined;
}
