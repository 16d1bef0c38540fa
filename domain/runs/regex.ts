import { RunInputError } from './errors.js';
import { MAX_REGEX_INPUT_LENGTH, MAX_REGEX_PATTERN_LENGTH, MAX_REGEX_STATES, MAX_REGEX_WORK } from './limits.js';
import { isWordChar, parseRegex, type CharTest, type RegexNode } from './regex-parse.js';

/**
 * ReDoS-safe `regex` conditions. JavaScript's RegExp backtracks, so `(a+)+$` or even `a*a*a*b`
 * can take hours on a short text, and no timeout can interrupt it. Conditions are therefore
 * matched by a Thompson automaton simulated state-set by state-set: every step looks at each state
 * at most once per input position, so the work is at most states × (length + 1), which is bounded
 * by MAX_REGEX_WORK before matching starts. Patterns over MAX_REGEX_PATTERN_LENGTH characters or
 * MAX_REGEX_STATES states, and texts over MAX_REGEX_INPUT_LENGTH code units, are refused.
 * The answer is the same as `new RegExp(source).test(text)`. RE2 ports (re2js) were tried and not
 * taken: they give Perl's answers for `\s`, `.` and astral characters, and silently mistranslate
 * some JavaScript syntax (test/unit/runs.regex.test.ts keeps those cases).
 */
const CHAR = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;
type Assertion = Extract<RegexNode, { k: 'assert' }>['at'];

export interface SafeRegex {
  readonly states: number;
  test(input: string): boolean;
}

class Program implements SafeRegex {
  readonly kind: number[] = [];
  readonly out: number[] = [];
  readonly out2: number[] = [];
  readonly tests: Array<CharTest | null> = [];
  readonly asserts: Array<Assertion | null> = [];
  start = -1;

  get states() {
    return this.kind.length;
  }

  add(kind: number, out: number, extra: { out2?: number; test?: CharTest; assert?: Assertion } = {}): number {
    if (this.kind.length >= MAX_REGEX_STATES) {
      throw new RunInputError('CONDITION_REGEX_TOO_COMPLEX', `the regular expression compiles to more than ${MAX_REGEX_STATES} states (large repetition counts?)`);
    }
    this.kind.push(kind);
    this.out.push(out);
    this.out2.push(extra.out2 ?? -1);
    this.tests.push(extra.test ?? null);
    this.asserts.push(extra.assert ?? null);
    return this.kind.length - 1;
  }

  /** Compiles `node` so that it continues to state `next`; returns its first state. */
  compile(node: RegexNode, next: number): number {
    switch (node.k) {
      case 'char':
        return this.add(CHAR, next, { test: node.test });
      case 'assert':
        return this.add(ASSERT, next, { assert: node.at });
      case 'seq':
        for (let i = node.items.length - 1; i >= 0; i--) next = this.compile(node.items[i], next);
        return next;
      case 'alt': {
        const starts = node.options.map((o) => this.compile(o, next));
        return starts.reduceRight((rest, first) => this.add(SPLIT, first, { out2: rest }));
      }
      case 'rep': {
        const { min, max } = node;
        if (min > MAX_REGEX_STATES || (max !== Infinity && max > MAX_REGEX_STATES)) {
          throw new RunInputError('CONDITION_REGEX_TOO_COMPLEX', `repetition counts above ${MAX_REGEX_STATES} are not supported`);
        }
        let tail: number;
        if (max === Infinity) {
          tail = this.add(SPLIT, -1, { out2: next });
          this.out[tail] = this.compile(node.node, tail);
        } else {
          tail = next;
          for (let i = 0; i < max - min; i++) tail = this.add(SPLIT, this.compile(node.node, tail), { out2: next });
        }
        for (let i = 0; i < min; i++) tail = this.compile(node.node, tail);
        return tail;
      }
    }
  }

  test(input: string): boolean {
    const n = input.length;
    const mark = new Int32Array(this.kind.length);
    let generation = 0;
    let current: number[] = [];
    let following: number[] = [];
    const stack: number[] = [];
    const word = (i: number) => i >= 0 && i < n && isWordChar(input.charCodeAt(i));
    const holds = (a: Assertion, pos: number) =>
      a === 'start' ? pos === 0 : a === 'end' ? pos === n : a === 'boundary' ? word(pos - 1) !== word(pos) : word(pos - 1) === word(pos);
    /** Adds `state` and what it reaches without reading a character; true once the match state is reached. */
    const add = (list: number[], state: number, pos: number): boolean => {
      stack.push(state);
      while (stack.length > 0) {
        const s = stack.pop()!;
        if (mark[s] === generation) continue;
        mark[s] = generation;
        const kind = this.kind[s];
        if (kind === MATCH) return (stack.length = 0), true;
        if (kind === CHAR) list.push(s);
        else if (kind === SPLIT) stack.push(this.out2[s], this.out[s]);
        else if (holds(this.asserts[s]!, pos)) stack.push(this.out[s]);
      }
      return false;
    };
    generation = 1;
    if (add(current, this.start, 0)) return true;
    for (let i = 0; i < n; i++) {
      const c = input.charCodeAt(i);
      generation++;
      following.length = 0;
      for (const s of current) if (this.tests[s]!(c) && add(following, this.out[s], i + 1)) return true;
      // A match may also begin at the next position (the search is unanchored).
      if (add(following, this.start, i + 1)) return true;
      [current, following] = [following, current];
    }
    return false;
  }
}

const cache = new Map<string, Program>();
const CACHE_LIMIT = 500;

/** Compiles a condition's pattern, or throws RunInputError with a CONDITION_* code. Memoized. */
export function compileSafeRegex(source: string): SafeRegex {
  const cached = cache.get(source);
  if (cached) return cached;
  if (source.length > MAX_REGEX_PATTERN_LENGTH) {
    throw new RunInputError('CONDITION_REGEX_TOO_LONG', `regular expressions in conditions are limited to ${MAX_REGEX_PATTERN_LENGTH} characters`);
  }
  try {
    new RegExp(source); // compiling runs nothing; it settles what is valid syntax
  } catch (err) {
    throw new RunInputError('CONDITION_INVALID_REGEX', `not a valid regular expression: ${(err as Error).message}`);
  }
  const program = new Program();
  const match = program.add(MATCH, -1);
  program.start = program.compile(parseRegex(source), match);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(source, program);
  return program;
}

/** `new RegExp(source).test(input)`, in bounded time, or a RunInputError. */
export function safeRegexTest(source: string, input: string): boolean {
  if (input.length > MAX_REGEX_INPUT_LENGTH) {
    throw new RunInputError('CONDITION_INPUT_TOO_LARGE', `regex conditions look at most ${MAX_REGEX_INPUT_LENGTH} characters; the output has ${input.length}`);
  }
  const regex = compileSafeRegex(source);
  if (regex.states * (input.length + 1) > MAX_REGEX_WORK) {
    throw new RunInputError('CONDITION_INPUT_TOO_LARGE', `this regular expression (${regex.states} states) is too complex for an output of ${input.length} characters`);
  }
  return regex.test(input);
}
