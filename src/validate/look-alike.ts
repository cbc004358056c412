// Usernames are stored and compared exactly (docs/contract/flood-api.md "Values"), so `Admin`, `admin\u200b` and
// `ａｄｍｉｎ` are other accounts than `admin`, although a person reading a list, a log or an app's
// page takes them for the same. An account is not made or renamed onto a name that looks like an
// existing one in this sense (docs/contract/access.md "Look-alike names"; store/account-rules.ts).

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The name's NFKC case-folded form without default-ignorable code points (toNFKC_Casefold, the
 * Unicode Standard section 3.13): equal for two names that differ only in case, width,
 * compatibility forms or invisible characters. Full case folding is taken as lower, upper, then
 * lower case again, which folds `ß` and `ẞ` to `ss` and final sigma to sigma; it also folds the
 * dotless `ı` to `i`, one look-alike more than Unicode's folding.
 */
export function lookAlikeKeyOf(username: string): string {
  const compatible = username.replace(DEFAULT_IGNORABLE, '').normalize('NFKC');
  return compatible.toLowerCase().toUpperCase().toLowerCase().normalize('NFKC').replace(DEFAULT_IGNORABLE, '');
}
