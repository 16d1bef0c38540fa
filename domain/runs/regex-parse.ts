import { RunInputError } from './errors.js';

/**
 * A parser for the JavaScript regular-expression syntax (no flags, so not Unicode mode) that a
 * condition's `value` is written in, into a tree the linear-time matcher in regex.ts compiles.
 * Everything that needs backtracking to mean anything — lookarounds, backreferences — is refused
 * as unsupported; everything else means what it means in `new RegExp(source)`, which is checked
 * first, so only valid patterns arrive here.
 */
export type CharTest = (c: number) => boolean;
export type RegexNode =
  | { k: 'char'; test: CharTest }
  | { k: 'assert'; at: 'start' | 'end' | 'boundary' | 'notBoundary' }
  | { k: 'seq'; items: RegexNode[] }
  | { k: 'alt'; options: RegexNode[] }
  | { k: 'rep'; node: RegexNode; min: number; max: number };

const isDigit: CharTest = (c) => c >= 48 && c <= 57;
export const isWordChar: CharTest = (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || isDigit(c) || c === 95;
const SPACES = new Set([9, 10, 11, 12, 13, 32, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]);
const isSpace: CharTest = (c) => SPACES.has(c) || (c >= 0x2000 && c <= 0x200a);
const isLineTerminator = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const not =
  (t: CharTest): CharTest =>
  (c) =>
    !t(c);
const CLASS_ESCAPES: Record<string, CharTest> = { d: isDigit, D: not(isDigit), w: isWordChar, W: not(isWordChar), s: isSpace, S: not(isSpace) };
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

const unsupported = (what: string) =>
  new RunInputError('CONDITION_REGEX_UNSUPPORTED', `regular expressions in conditions may not use ${what} (they are matched in linear time, without backtracking)`);

type ClassAtom = { code: number } | { test: CharTest };

class Parser {
  private pos = 0;
  constructor(private readonly src: string) {}

  parse(): RegexNode {
    const node = this.alternation();
    if (this.pos < this.src.length) throw new RunInputError('CONDITION_INVALID_REGEX', `unexpected ${this.src[this.pos]} at ${this.pos}`);
    return node;
  }

  private peek(offset = 0) {
    return this.src[this.pos + offset];
  }

  private alternation(): RegexNode {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { k: 'alt', options };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    while (this.pos < this.src.length && this.peek() !== '|' && this.peek() !== ')') items.push(this.term());
    return { k: 'seq', items };
  }

  private term(): RegexNode {
    const atom = this.atom();
    const q = this.quantifier();
    if (!q) return atom;
    if (this.peek() === '?') this.pos++; // lazy: the same language, and only "is there a match" is asked
    return { k: 'rep', node: atom, ...q };
  }

  private quantifier(): { min: number; max: number } | null {
    const c = this.peek();
    if (c === '*') return this.pos++, { min: 0, max: Infinity };
    if (c === '+') return this.pos++, { min: 1, max: Infinity };
    if (c === '?') return this.pos++, { min: 0, max: 1 };
    if (c !== '{') return null;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
    if (!m) return null; // a literal brace
    this.pos += m[0].length;
    const min = Number(m[1]);
    return { min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
  }

  private atom(): RegexNode {
    const c = this.src[this.pos++];
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return { k: 'char', test: this.charClass() };
      case '.':
        return { k: 'char', test: (x) => !isLineTerminator(x) };
      case '^':
        return { k: 'assert', at: 'start' };
      case '$':
        return { k: 'assert', at: 'end' };
      case '\\':
        return this.escape();
      default: {
        const code = c.charCodeAt(0);
        return { k: 'char', test: (x) => x === code };
      }
    }
  }

  private group(): RegexNode {
    if (this.peek() === '?') {
      if (this.peek(1) === ':') this.pos += 2;
      else if (this.peek(1) === '<' && this.peek(2) !== '=' && this.peek(2) !== '!') this.pos = this.src.indexOf('>', this.pos) + 1;
      else throw unsupported('lookarounds or inline modifiers');
    }
    const inner = this.alternation();
    this.pos++; // ')', guaranteed by the native syntax check
    return inner;
  }

  private escape(): RegexNode {
    const e = this.src[this.pos];
    if (e === 'b') return this.pos++, { k: 'assert', at: 'boundary' };
    if (e === 'B') return this.pos++, { k: 'assert', at: 'notBoundary' };
    const atom = this.escapedAtom(false);
    return { k: 'char', test: 'test' in atom ? atom.test : (x) => x === atom.code };
  }

  /** After a backslash: one character code, or a class (\d, \w, \s and their negations). */
  private escapedAtom(inClass: boolean): ClassAtom {
    const e = this.src[this.pos++];
    if (Object.hasOwn(CLASS_ESCAPES, e)) return { test: CLASS_ESCAPES[e] };
    if (Object.hasOwn(CONTROL_ESCAPES, e)) return { code: CONTROL_ESCAPES[e] };
    if (inClass && e === 'b') return { code: 8 };
    if (e === '0' && !isDigit(this.src.charCodeAt(this.pos))) return { code: 0 };
    if (isDigit(e.charCodeAt(0))) throw unsupported('backreferences or octal escapes');
    if (e === 'k') throw unsupported('named backreferences');
    if (e === 'x' || e === 'u') {
      const digits = e === 'x' ? 2 : 4;
      const hex = this.src.slice(this.pos, this.pos + digits);
      if (new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) return (this.pos += digits), { code: parseInt(hex, 16) };
      return { code: e.charCodeAt(0) };
    }
    if (e === 'c') {
      const letter = this.src.charCodeAt(this.pos);
      if ((letter >= 65 && letter <= 90) || (letter >= 97 && letter <= 122)) return this.pos++, { code: letter % 32 };
      throw unsupported('\\c without a letter');
    }
    return { code: e.charCodeAt(0) };
  }

  private classAtom(): ClassAtom {
    const c = this.src[this.pos++];
    return c === '\\' ? this.escapedAtom(true) : { code: c.charCodeAt(0) };
  }

  private charClass(): CharTest {
    const negate = this.peek() === '^';
    if (negate) this.pos++;
    const ranges: number[] = [];
    const tests: CharTest[] = [];
    const add = (a: ClassAtom) => ('test' in a ? tests.push(a.test) : ranges.push(a.code, a.code));
    while (this.peek() !== ']') {
      const first = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++;
        const second = this.classAtom();
        if ('code' in first && 'code' in second) ranges.push(first.code, second.code);
        else add(first), add({ code: 45 }), add(second); // [\d-z]: the dash is literal
      } else add(first);
    }
    this.pos++;
    return (x) => {
      let hit = false;
      for (let i = 0; i < ranges.length && !hit; i += 2) hit = x >= ranges[i] && x <= ranges[i + 1];
      for (let i = 0; i < tests.length && !hit; i++) hit = tests[i](x);
      return hit !== negate;
    };
  }
}

export const parseRegex = (source: string): RegexNode => new Parser(source).parse();
