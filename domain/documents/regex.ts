import { RE2JS } from 're2js';

/**
 * Every pattern a user writes into the document database (a search's `$regex`, a schema's
 * `pattern` and `patternProperties`) is matched by re2js, a port of RE2: matching time is linear in
 * the input whatever the pattern, so a 256 KB document and `.*x` cost milliseconds, never minutes
 * on the event loop. JavaScript's backtracking `RegExp` never sees a user pattern here.
 *
 * RE2 has no backreferences and no lookaround: a pattern using them is refused (`unsupported`),
 * which is also what FerretDB (Go's RE2) does, so both read stores answer alike.
 * Options: `i`, `m`, `s` map onto RE2's flags; `x` (extended) is applied here, by removing
 * unescaped whitespace and `#` comments outside character classes, because RE2 lacks it.
 */
export class UserRegexError extends Error {
  constructor(message: string, readonly reason: 'invalid' | 'unsupported' | 'too_complex') {
    super(message);
    this.name = 'UserRegexError';
  }
}

export interface UserRegex {
  /** The pattern RE2 runs (after `x` was applied) and the remaining options. */
  readonly pattern: string;
  readonly options: string;
  /** Unanchored search, like RegExp.prototype.test. */
  test(input: string): boolean;
}

/** Captured at load: while withRe2RegExp runs, the global RegExp is Re2RegExp. */
const NativeRegExp = RegExp;

export const REGEX_OPTIONS = /^(?!.*(.).*\1)[imsx]{0,4}$/;

/** RE2 program instructions of one pattern (`a{400}` is about 400). */
export const MAX_PROGRAM_SIZE = 500;

const compiled = new Map<string, UserRegex>();
const MAX_CACHED = 1000;

/** Compiles with RE2 semantics; throws UserRegexError('invalid' | 'unsupported'). Cached by pattern and options. */
export function compileUserRegex(source: string, options = ''): UserRegex {
  const key = `${options}/${source}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  if (!REGEX_OPTIONS.test(options)) throw new UserRegexError(`options "${options}" are not among i, m, s and x`, 'invalid');
  const pattern = options.includes('x') ? stripExtended(source) : source;
  const rest = options.replace('x', '');
  let flags = 0;
  if (rest.includes('i')) flags |= RE2JS.CASE_INSENSITIVE;
  if (rest.includes('m')) flags |= RE2JS.MULTILINE;
  if (rest.includes('s')) flags |= RE2JS.DOTALL;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, flags);
  } catch (err) {
    const message = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw new UserRegexError(message, validInJavaScript(pattern, rest) ? 'unsupported' : 'invalid');
  }
  // Linear, but in input length times program size: `[\s\S]{1000}` costs ~0.1 s per 256 KB
  // document. Capping the program keeps one document's match to a few tens of milliseconds.
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    throw new UserRegexError(`the pattern compiles to ${re.programSize()} instructions; at most ${MAX_PROGRAM_SIZE} (use smaller repetition counts)`, 'too_complex');
  }
  const regex: UserRegex = { pattern, options: rest, test: (input) => re.test(input) };
  compiled.set(key, regex);
  if (compiled.size > MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  return regex;
}

/** Only to tell "RE2 lacks this" from "this is no regex at all"; the pattern never runs in JavaScript. */
function validInJavaScript(pattern: string, options: string): boolean {
  try {
    new NativeRegExp(pattern, options);
    return true;
  } catch {
    return false;
  }
}

/** PCRE's extended mode: whitespace and `#…` comments outside classes are not part of the pattern. */
function stripExtended(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

/**
 * A RegExp whose matching is RE2's: handed to code that builds RegExps from user patterns (zod's
 * JSON Schema converter) so that `test`/`exec` never backtrack. A pattern RE2 refuses here came
 * from a schema stored before patterns were checked with RE2; it keeps JavaScript semantics, which
 * the screen of the time (no nested repetition, no lookaround) accepted.
 */
export class Re2RegExp extends NativeRegExp {
  private readonly re2: UserRegex | null;
  private readonly userSource: string;
  private readonly userFlags: string;

  /** Code run under withRe2RegExp tests `x instanceof RegExp` against this class: every RegExp is one. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof NativeRegExp;
  }

  constructor(pattern: string | RegExp, flags?: string) {
    // A copy of a Re2RegExp (libraries clone RegExps with `new RegExp(re)`) keeps its pattern and options.
    const own = pattern instanceof NativeRegExp && 'userSource' in pattern ? (pattern as unknown as { userSource: string; userFlags: string }) : null;
    const source = typeof pattern === 'string' ? pattern : own ? own.userSource : pattern.source;
    const given = flags ?? (typeof pattern === 'string' ? '' : own ? own.userFlags : pattern.flags);
    let re2: UserRegex | null = null;
    try {
      re2 = compileUserRegex(source, given.replace(/[gyud]/g, ''));
    } catch {
      re2 = null;
    }
    // The native part only carries flags JavaScript knows (`x` is RE2-side only).
    super(re2 ? '(?:)' : source, given.replace(/[^dgimsuy]/g, ''));
    this.re2 = re2;
    this.userSource = source;
    this.userFlags = given;
  }

  override get source(): string {
    return this.userSource;
  }

  override test(input: string): boolean {
    return this.re2 ? this.re2.test(String(input)) : super.test(input);
  }

  override exec(input: string): RegExpExecArray | null {
    if (!this.re2) return super.exec(input);
    if (!this.re2.test(String(input))) return null;
    // Callers here only ask whether it matched; the match text is not computed.
    return Object.assign([String(input)], { index: 0, input: String(input), groups: undefined }) as RegExpExecArray;
  }

  override toString(): string {
    return `/${this.userSource}/${this.userFlags}`;
  }
}

/**
 * Runs `build` with the global RegExp constructor standing for Re2RegExp, for libraries that
 * construct RegExps from user patterns internally. `build` must be synchronous: nothing else can
 * run while the swap lasts.
 */
export function withRe2RegExp<T>(build: () => T): T {
  const g = globalThis as { RegExp: RegExpConstructor };
  g.RegExp = Re2RegExp as unknown as RegExpConstructor;
  try {
    return build();
  } finally {
    g.RegExp = NativeRegExp;
  }
}
