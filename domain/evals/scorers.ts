import { compileUserRegex, UserRegexError } from '../documents/regex.js';
import type { Score, Scorer } from './events.js';

/**
 * The scorers that need nothing outside the domain: exact, contains, regex (RE2, linear time in
 * the output whatever the pattern), numeric tolerance. JSON Schema (ajv) and the LLM judge are
 * scored in commands/evals-scoring.ts; the judge's prompt and the reading of its answer are here.
 */

/** A run's result as a case compares it: the single output when the run has one, else the outputs by key. */
export function caseOutputOf(outputs: Record<string, unknown> | null): unknown {
  if (!outputs) return null;
  const keys = Object.keys(outputs);
  return keys.length === 1 ? outputs[keys[0]] : outputs;
}

/** A value as text: strings as they are, anything else as its JSON. */
export const textOf = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'));

/** JSON with object keys sorted, so {a, b} and {b, a} compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Each scorer's label in results: its name, else its type (`regex#2` when several of a type have no name). */
export function scorerLabels(scorers: Scorer[]): string[] {
  return scorers.map((s, i) => s.name ?? (scorers.filter((o) => o.type === s.type && !o.name).length > 1 ? `${s.type}#${i}` : s.type));
}

const verdict = (scorer: string, pass: boolean, reason: string | null): Score => ({ scorer, score: pass ? 1 : 0, pass, reason });

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export type PureScorer = Extract<Scorer, { type: 'exact' | 'contains' | 'regex' | 'numeric' }>;
export const isPureScorer = (s: Scorer): s is PureScorer => s.type === 'exact' || s.type === 'contains' || s.type === 'regex' || s.type === 'numeric';

export function scorePure(scorer: PureScorer, label: string, output: unknown, expected: unknown): Score {
  switch (scorer.type) {
    case 'exact': {
      if (typeof output === 'string' && typeof expected === 'string') {
        const norm = (s: string) => (scorer.ignoreCase ? s.trim().toLowerCase() : s.trim());
        return verdict(label, norm(output) === norm(expected), null);
      }
      return verdict(label, canonical(output) === canonical(expected), null);
    }
    case 'contains': {
      const wanted = scorer.value ?? (expected === null || expected === undefined ? null : textOf(expected));
      if (wanted === null) return verdict(label, false, 'no value to look for: the case has no expected output and the scorer no value');
      const text = textOf(output);
      const found = scorer.ignoreCase ? text.toLowerCase().includes(wanted.toLowerCase()) : text.includes(wanted);
      return verdict(label, found, found ? null : `the output does not contain ${JSON.stringify(wanted.slice(0, 200))}`);
    }
    case 'regex': {
      const found = compileUserRegex(scorer.pattern, scorer.options).test(textOf(output));
      return verdict(label, found, found ? null : 'the pattern does not match the output');
    }
    case 'numeric': {
      const got = asNumber(output);
      const want = asNumber(expected);
      if (got === null || want === null) return verdict(label, false, got === null ? 'the output is not a number' : 'the expected output is not a number');
      const allowed = scorer.relative ? scorer.tolerance * Math.abs(want) : scorer.tolerance;
      const diff = Math.abs(got - want);
      return verdict(label, diff <= allowed, `|${got} - ${want}| = ${diff} (allowed ${allowed})`);
    }
  }
}

/** The regex scorers' patterns compiled once before anything runs: an invalid or unsupported pattern is the request's fault. */
export function regexProblem(scorer: Scorer): string | null {
  if (scorer.type !== 'regex') return null;
  try {
    compileUserRegex(scorer.pattern, scorer.options);
    return null;
  } catch (err) {
    if (err instanceof UserRegexError) return err.message;
    throw err;
  }
}

// ---------------------------------------------------------------- LLM as judge

export const JUDGE_SYSTEM =
  'You grade the output of an automated flow against a rubric. Answer with one JSON object and nothing else: ' +
  '{"score": <number from 0 to 1>, "pass": <true or false>, "reason": "<one sentence>"}.';

/** The judge's user message: the rubric, the case's input, the expected output when there is one, the output. */
export function judgePrompt(rubric: string, input: unknown, expected: unknown, output: unknown): string {
  const cap = (s: string) => (s.length > 20_000 ? `${s.slice(0, 20_000)}…[truncated]` : s);
  return [
    `Rubric:\n${rubric}`,
    `Input:\n${cap(textOf(input))}`,
    ...(expected === null || expected === undefined ? [] : [`Expected output:\n${cap(textOf(expected))}`]),
    `Output to grade:\n${cap(textOf(output))}`,
  ].join('\n\n');
}

/**
 * The judge's verdict from its answer: the first JSON object in the text (models wrap it in prose
 * or code fences); `score` clamped to [0, 1]; it passes at or above the threshold unless the judge said `pass: false`. An answer
 * without a readable score is a failing score with the reason saying so, never a crash.
 */
export function readJudgeAnswer(label: string, text: string, threshold: number): Score {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  let parsed: unknown = null;
  if (start !== -1 && end > start) {
    try {
      parsed = JSON.parse(text.slice(start, end + 1));
    } catch {
      parsed = null;
    }
  }
  const obj = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  const raw = obj ? asNumber(obj.score) : null;
  if (raw === null) return { scorer: label, score: 0, pass: false, reason: `JUDGE_UNREADABLE: the judge's answer has no score: ${JSON.stringify(text.slice(0, 200))}` };
  const score = Math.min(1, Math.max(0, raw));
  const pass = score >= threshold && obj!.pass !== false;
  return { scorer: label, score, pass, reason: typeof obj!.reason === 'string' ? obj!.reason.slice(0, 1_000) : null };
}
