import { expect } from 'chai';
import { MAX_REGEX_INPUT_LENGTH, MAX_REGEX_PATTERN_LENGTH, MAX_REGEX_STATES, RunInputError, compileSafeRegex, safeRegexTest } from '../../domain/runs/index.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(RunInputError);
    return (err as RunInputError).code;
  }
  return 'no error';
}

const PATTERNS = [
  'abc',
  '^abc',
  'abc$',
  '^$',
  '',
  'a.c',
  'a.*c',
  'a+?b',
  'colou?r',
  'x{2}',
  'x{2,}',
  'x{1,3}y',
  'x{0}y',
  'a{,2}',
  '(cat|dog)s?',
  '(?:ab)+$',
  '(?<word>\\w+)-\\d',
  '^(a|b|)+$',
  '[a-c]+',
  '[^a-c]',
  '[\\d.]+',
  '[\\w-]+@',
  '[a\\-z]',
  '[]',
  '[^]',
  '\\bis\\b',
  '\\Bis',
  '\\d\\D\\s\\S\\w\\W',
  '\\x41\\u0042',
  '\\t|\\n',
  '\\.\\*\\$',
  '\\cJ',
  '[\\b]',
  'a|',
  '(a*)*b',
  '(x+x+)+y',
  '.\\u00e9',
  '}]',
  '^\\s*$',
  '(\\d+)\\s*(apples|pears)',
];
const INPUTS = ['', 'abc', 'xabcx', 'ac', 'a\nc', 'aaab', 'color', 'colour', 'xx', 'xxxy', 'y', 'hotdogs', 'cats', 'ababab', 'word-1', 'aabba', 'abba', 'd', '3.14', 'me-you@x', '-', 'z', 'this is it', 'island', '1a b_$', 'AB', 'tab\there', 'line\n', '.*$', 'J', '\b', '\n', 'xxxxxxxxy', 'xé', '}]', '   ', '12 apples', 'A', 'é'];

describe('safe regex: same answers as RegExp', () => {
  it('agrees with new RegExp(p).test(s) on every pattern and input of the table', () => {
    let compared = 0;
    for (const p of PATTERNS) {
      const native = new RegExp(p);
      for (const s of INPUTS) {
        expect(safeRegexTest(p, s), `/${p}/ on ${JSON.stringify(s)}`).to.equal(native.test(s));
        compared++;
      }
    }
    expect(compared).to.equal(PATTERNS.length * INPUTS.length);
  });

  it('agrees on generated inputs over a small alphabet', () => {
    const alphabet = ['a', 'b', 'x', ' ', '-', '1'];
    const patterns = ['^(a|ab)*b$', '(a|b)*abb', 'a?b+\\b', '^[ab]{2,3}$', '\\b1\\b', '(?:a-|b )+1', 'x*$', '^(?:a*b*)*x'];
    let state = 7;
    const random = () => ((state = (state * 1103515245 + 12345) % 2147483648), state);
    for (let i = 0; i < 400; i++) {
      const s = Array.from({ length: random() % 9 }, () => alphabet[random() % alphabet.length]).join('');
      for (const p of patterns) expect(safeRegexTest(p, s), `/${p}/ on ${JSON.stringify(s)}`).to.equal(new RegExp(p).test(s));
    }
  });
});

describe('safe regex: where RE2 (re2js) answers differently from RegExp, ours does not', () => {
  // Why the engine was kept rather than replaced by re2js (README, design notes): RE2 follows
  // Perl/Go meanings, and its translateRegExp drops what it cannot map without saying so.
  it('\\s is JavaScript\'s whitespace, . stops at every line terminator, and characters are UTF-16 code units', () => {
    const cases: Array<[string, string]> = [
      ['\\s', '\v'], ['\\s', '\u00a0'], ['\\s', '\u2003'], ['\\s', '\ufeff'], ['[\\s]', '\u00a0'],
      ['a.c', 'a\rc'], ['a.c', 'a\u2028c'], ['^.$', '😀'], ['^..$', '😀'], ['^[^a]$', '😀'], ['[\\b]', '\b'],
    ];
    for (const [p, s] of cases) expect(safeRegexTest(p, s), `/${p}/ on ${JSON.stringify(s)}`).to.equal(new RegExp(p).test(s));
  });

  it('refuses a named backreference instead of matching it as literal text', () => {
    expect(codeOf(() => compileSafeRegex('(?<x>a)\\k<x>'))).to.equal('CONDITION_REGEX_UNSUPPORTED');
  });
});

describe('safe regex: bounded', () => {
  it('answers catastrophic patterns in linear time', () => {
    const started = Date.now();
    // Each of these would keep RegExp busy for longer than the age of the universe.
    expect(safeRegexTest('(a+)+$', 'a'.repeat(50_000))).to.equal(true);
    expect(safeRegexTest('(a+)+$', `${'a'.repeat(50_000)}!`)).to.equal(false);
    expect(safeRegexTest('^(a+)+$', `${'a'.repeat(50_000)}!`)).to.equal(false);
    expect(safeRegexTest('(x+x+)+y', 'x'.repeat(20_000))).to.equal(false);
    expect(safeRegexTest('a*a*a*a*a*b', 'a'.repeat(50_000))).to.equal(false);
    expect(safeRegexTest('^(\\w+\\s?)*$', `${'word '.repeat(10_000)}!`)).to.equal(false);
    expect(Date.now() - started, 'milliseconds for all of them').to.be.below(2_000);
  });

  it('refuses patterns that are too long, compile to too many states, or need backtracking', () => {
    expect(codeOf(() => compileSafeRegex('a'.repeat(MAX_REGEX_PATTERN_LENGTH + 1)))).to.equal('CONDITION_REGEX_TOO_LONG');
    expect(compileSafeRegex('a'.repeat(MAX_REGEX_PATTERN_LENGTH)).states).to.be.above(MAX_REGEX_PATTERN_LENGTH);
    expect(codeOf(() => compileSafeRegex(`(?:abc){${MAX_REGEX_STATES}}`))).to.equal('CONDITION_REGEX_TOO_COMPLEX');
    expect(codeOf(() => compileSafeRegex('(?:a{100}){100}'))).to.equal('CONDITION_REGEX_TOO_COMPLEX');
    expect(codeOf(() => compileSafeRegex(`a{${MAX_REGEX_STATES + 1}}`))).to.equal('CONDITION_REGEX_TOO_COMPLEX');
    for (const p of ['a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<x>a)\\k<x>', '\\01']) {
      expect(codeOf(() => compileSafeRegex(p)), p).to.equal('CONDITION_REGEX_UNSUPPORTED');
    }
    expect(codeOf(() => compileSafeRegex('a**'))).to.equal('CONDITION_INVALID_REGEX');
  });

  it('refuses inputs that are too long, or too long for a complex pattern', () => {
    expect(codeOf(() => safeRegexTest('a', 'a'.repeat(MAX_REGEX_INPUT_LENGTH + 1)))).to.equal('CONDITION_INPUT_TOO_LARGE');
    expect(safeRegexTest('b', 'a'.repeat(MAX_REGEX_INPUT_LENGTH))).to.equal(false);
    expect(codeOf(() => safeRegexTest('[a-z]{200}', 'a'.repeat(MAX_REGEX_INPUT_LENGTH)))).to.equal('CONDITION_INPUT_TOO_LARGE');
  });
});
