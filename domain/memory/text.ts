/**
 * The tokenizer the lexical ranking uses, for memories and queries alike. Small on purpose:
 * - Unicode-aware: letters and digits of any script form words (NFKD, then diacritics dropped,
 *   so "café" and "cafe" match); everything else separates words; lower-cased;
 * - English stop words are dropped (the ~120 most common function words: they carry no topic);
 * - light stemming: a handful of English suffix rules (plural -s/-es/-ies, -ing, -ed, consonant+y,
 *   -ment, -ness, -ation…), applied once, never below a 3-letter stem. It is not Porter: it
 *   conflates "likes/liked/liking" → "lik" and "allergies/allergy" → "allergi", and leaves
 *   irregular forms ("ran"/"run") apart. Good enough for short memory texts; documented in README.
 * - prefix terms: every token longer than PREFIX_LENGTH also yields `<first 5 letters>*`, so
 *   forms the stemmer keeps apart still meet at half weight ("travelling" → "travell" and
 *   "travel" share "trave*"; "allergic" and "allergies" share "aller*"). An edge n-gram, as search
 *   engines use for the same purpose.
 * Tokens are ASCII-safe after folding for Latin scripts; other scripts keep their letters.
 */
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are aren as at be because been before being below between both but by ' +
    'can could did didn do does doesn doing don down during each few for from further had has have having he her here hers herself ' +
    'him himself his how i if in into is isn it its itself just let me more most my myself no nor not of off on once only or other ' +
    'ought our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these ' +
    'they this those through to too under until up very was wasn we were weren what when where which while who whom why will with ' +
    'won would you your yours yourself yourselves s t ll re ve d m also'
  ).split(' '),
);

/** [suffix, replacement], longest first; the first that fits wins. */
const SUFFIXES: Array<[string, string]> = [
  ['ational', 'ate'],
  ['ization', 'ize'],
  ['fulness', 'ful'],
  ['iveness', 'ive'],
  ['ations', 'ate'],
  ['ation', 'ate'],
  ['ments', ''],
  ['ment', ''],
  ['ness', ''],
  ['ings', ''],
  ['ing', ''],
  ['ies', 'i'],
  ['ied', 'i'],
  ['ed', ''],
  ['es', ''],
  ['s', ''],
  ['e', ''],
];
const MIN_STEM = 3;

/** One word (already lower-cased and folded) to its stem. */
export function stem(word: string): string {
  if (word.length <= MIN_STEM || /^\d+$/.test(word)) return word;
  if (word.endsWith('ss')) return word; // "glass", "address": not plurals
  for (const [suffix, replacement] of SUFFIXES) {
    if (!word.endsWith(suffix)) continue;
    const base = word.slice(0, word.length - suffix.length);
    if (base.length < MIN_STEM) continue;
    let stemmed = base + replacement;
    // "running" → "runn" → "run", "stopped" → "stopp" → "stop"
    if (replacement === '' && /([b-df-hj-np-tv-z])\1$/.test(stemmed) && !/(ll|ss|zz)$/.test(stemmed)) stemmed = stemmed.slice(0, -1);
    return stemmed;
  }
  // "allergy" / "allergies" → "allergi", but "birthday" stays (a vowel before the y)
  if (/[b-df-hj-np-tv-z]y$/.test(word)) return `${word.slice(0, -1)}i`;
  return word;
}

const WORD = /[\p{L}\p{N}]+/gu;
const DIACRITICS = /\p{M}+/gu;
/** Longer words are noise (hashes, base64) and would bloat the stored token list. */
const MAX_WORD_LENGTH = 40;

/** The stemmed, stop-word-free tokens of a text, in order (duplicates kept: they are term frequencies). */
export function tokenize(text: string): string[] {
  const folded = text.normalize('NFKD').replace(DIACRITICS, '').toLowerCase();
  const tokens: string[] = [];
  for (const match of folded.matchAll(WORD)) {
    const word = match[0];
    if (word.length > MAX_WORD_LENGTH || STOP_WORDS.has(word)) continue;
    tokens.push(stem(word));
  }
  return tokens;
}

/** The distinct tokens of a text. */
export function uniqueTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}

export const PREFIX_LENGTH = 5;
/** Weight of a prefix-term match relative to a whole-token match. */
export const PREFIX_WEIGHT = 0.5;
export const isPrefixTerm = (term: string) => term.endsWith('*');

/** What is indexed for a text: its tokens, then the prefix terms of the long ones. */
export function indexTerms(tokens: string[]): string[] {
  const prefixes: string[] = [];
  for (const t of tokens) if (t.length > PREFIX_LENGTH) prefixes.push(`${t.slice(0, PREFIX_LENGTH)}*`);
  return [...tokens, ...prefixes];
}
