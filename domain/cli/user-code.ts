/**
 * User codes of the device flow (RFC 8628 §6.1): 8 characters of an alphabet without vowels (no
 * words) and without look-alikes, shown `XXXX-XXXX`, compared case-insensitively with separators
 * ignored. 20^8 ≈ 2.6·10^10 codes (34.5 bits); guessing is throttled by rate limits, not entropy.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** Uppercase, without the separators people type or copy (spaces, dashes, dots, underscores). */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[\s\-_.]/g, '');
}

/** True when the normalized code could have been issued by us: 8 characters of the alphabet. */
export function isWellFormedUserCode(normalized: string): boolean {
  if (normalized.length !== USER_CODE_LENGTH) return false;
  for (const ch of normalized) if (!USER_CODE_ALPHABET.includes(ch)) return false;
  return true;
}

/** `BCDFGHJK` → `BCDF-GHJK`. */
export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/** Builds a code from indexes into the alphabet; the caller supplies unbiased randomness. */
export function userCodeFromIndexes(indexes: number[]): string {
  if (indexes.length !== USER_CODE_LENGTH || indexes.some((i) => !Number.isInteger(i) || i < 0 || i >= USER_CODE_ALPHABET.length)) {
    throw new Error(`a user code needs ${USER_CODE_LENGTH} indexes in [0, ${USER_CODE_ALPHABET.length})`);
  }
  return indexes.map((i) => USER_CODE_ALPHABET[i]).join('');
}
