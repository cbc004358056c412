import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// prompt=login and max_age (OpenID Connect Core section 3.1.2.1): authorize sends the browser to the
// sign-in page with a mark, in the URL it returns to, saying after which second a session counts as
// new. The URL passes through the browser, so the mark is signed with a key this process alone holds,
// for one client, and counts only while a sign-in could still be under way: a mark written by hand,
// copied to another app's request, or kept from an earlier sign-in counts for nothing.

/** How long after it was made a mark counts: time enough to sign in, with a second factor. */
const FRESH_MARK_SECONDS = 600;

const MARK_FORMAT = /^([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

export type FreshMarks = ReturnType<typeof createFreshMarks>;

export function createFreshMarks(key: Buffer = randomBytes(32)) {
  const macOf = (clientId: string, atSeconds: number): Buffer =>
    createHmac('sha256', key).update(`${clientId}\n${atSeconds}`, 'utf8').digest();

  return {
    /** A mark for `clientId`: sessions made at or after `nowSeconds` are new. */
    make(clientId: string, nowSeconds: number): string {
      return `${nowSeconds}.${macOf(clientId, nowSeconds).toString('base64url')}`;
    },
    /** The second after which a session is new, from a mark this process made for `clientId` lately; else Infinity. */
    signedInAfter(mark: string | undefined, clientId: string, nowSeconds: number): number {
      const parts = MARK_FORMAT.exec(mark ?? '');
      if (parts === null) return Infinity;
      const atSeconds = Number(parts[1]);
      if (atSeconds > nowSeconds || nowSeconds - atSeconds > FRESH_MARK_SECONDS) return Infinity;
      const given = Buffer.from(parts[2] ?? '', 'base64url');
      const expected = macOf(clientId, atSeconds);
      return given.length === expected.length && timingSafeEqual(given, expected) ? atSeconds : Infinity;
    },
  };
}
