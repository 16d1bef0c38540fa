import type { Condition } from '../flows/node-data.js';
import { RunInputError } from './errors.js';
import type { ConditionalResult } from './events.js';
import { MAX_QUESTION_OUTPUT_LENGTH } from './limits.js';
import { safeRegexTest } from './regex.js';

/**
 * Conditions over a node's output (DESIGN.md section 5). Operator conditions are evaluated here;
 * `usePrompt` conditions are put to the node's model by the consumer, with the question built by
 * conditionQuestion and the answer read by parseYesNo.
 *
 * The output is looked at as text: a string as is, null/undefined as '', numbers and booleans
 * with String(), objects and arrays as JSON. Comparisons are case-sensitive.
 * - contains / not_contains / starts_with / ends_with: on that text, with String(value).
 * - equals / not_equals: numerically when both sides are numbers (`5` equals "5.0"), else the
 *   texts with surrounding whitespace trimmed (a model's trailing newline does not matter).
 * - gt / lt: numeric; false when either side is not a number.
 * - regex: `value` is a JavaScript pattern without flags, matched anywhere in the text, by the
 *   linear-time engine of regex.ts (bounded; see its limits).
 * - is_empty: null, undefined, a blank string, [] or {}; is_not_empty the opposite. 0 and false
 *   are not empty.
 */
export function outputText(output: unknown): string {
  if (output === null || output === undefined) return '';
  if (typeof output === 'string') return output;
  if (typeof output === 'number' || typeof output === 'boolean' || typeof output === 'bigint') return String(output);
  try {
    return JSON.stringify(output) ?? '';
  } catch {
    return String(output);
  }
}

const valueText = (value: unknown) => (value === null || value === undefined ? '' : String(value));

/** A finite number from a number or a numeric string, else null. */
export function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : null;
}

export function isEmptyOutput(output: unknown): boolean {
  if (output === null || output === undefined) return true;
  if (typeof output === 'string') return output.trim() === '';
  if (Array.isArray(output)) return output.length === 0;
  if (typeof output === 'object') return Object.keys(output).length === 0;
  return false;
}

function looselyEqual(output: unknown, value: unknown): boolean {
  const a = asNumber(output);
  const b = asNumber(value);
  if (a !== null && b !== null) return a === b;
  return outputText(output).trim() === valueText(value).trim();
}

/** An operator condition's result; a usePrompt condition (the model answers it) is a RunInputError. */
export function evaluateCondition(condition: Condition, output: unknown): boolean {
  if (condition.usePrompt) throw new RunInputError('CONDITION_NEEDS_MODEL', 'a usePrompt condition is answered by the node model (see conditionQuestion)');
  const value = condition.value;
  switch (condition.operator) {
    case 'contains':
      return outputText(output).includes(valueText(value));
    case 'not_contains':
      return !outputText(output).includes(valueText(value));
    case 'starts_with':
      return outputText(output).startsWith(valueText(value));
    case 'ends_with':
      return outputText(output).endsWith(valueText(value));
    case 'equals':
      return looselyEqual(output, value);
    case 'not_equals':
      return !looselyEqual(output, value);
    case 'gt':
    case 'lt': {
      const a = asNumber(output);
      const b = asNumber(value);
      if (a === null || b === null) return false;
      return condition.operator === 'gt' ? a > b : a < b;
    }
    case 'regex':
      return safeRegexTest(valueText(value), outputText(output));
    case 'is_empty':
      return isEmptyOutput(output);
    case 'is_not_empty':
      return !isEmptyOutput(output);
    default:
      throw new RunInputError('CONDITION_INVALID', `unknown condition operator ${String(condition.operator)}`);
  }
}

/** How a condition reads in conditionalResults: the prompt, or `operator "value"`. */
export function conditionLabel(condition: Condition): string {
  if (condition.usePrompt) return condition.prompt ?? '';
  if (condition.operator === 'is_empty' || condition.operator === 'is_not_empty') return condition.operator;
  return `${condition.operator ?? '?'} ${JSON.stringify(condition.value ?? null)}`;
}

export function conditionalResultOf(condition: Condition, index: number, result: boolean): ConditionalResult {
  return { condition: conditionLabel(condition), result, targetNodeId: condition.targetNodeId || null, index };
}

/**
 * The yes/no question a usePrompt condition puts to the node's model. The output is fenced so the
 * model can tell it from the question; beyond MAX_QUESTION_OUTPUT_LENGTH characters it is cut.
 */
export function conditionQuestion(condition: Condition, output: unknown): string {
  const text = outputText(output);
  const shown = text.length <= MAX_QUESTION_OUTPUT_LENGTH ? text : `${text.slice(0, MAX_QUESTION_OUTPUT_LENGTH)}\n[… ${text.length - MAX_QUESTION_OUTPUT_LENGTH} more characters cut]`;
  return [
    'Answer the question about the text below with a single word: yes or no.',
    '',
    `Question: ${(condition.prompt ?? '').trim()}`,
    '',
    'Text:',
    '<<<',
    shown,
    '>>>',
    '',
    'Answer (yes or no):',
  ].join('\n');
}

const YES = new Set(['yes', 'y', 'true', 'yep', 'yeah', 'correct', 'affirmative']);
const NO = new Set(['no', 'n', 'false', 'nope', 'incorrect', 'negative']);

/**
 * A model's answer to a yes/no question: true, false, or null when it says neither (or both).
 * Reads the first word after markdown, quotes and an `Answer:` prefix are stripped ("**Yes.**",
 * "No, because…"); failing that, a lone whole-word "yes" or "no" anywhere in the text.
 */
export function parseYesNo(text: string): boolean | null {
  const plain = text
    .toLowerCase()
    .replace(/[*_`"'“”‘’#>]/g, ' ')
    .trim()
    .replace(/^(final\s+)?answer\s*[:\-–]\s*/, '');
  const first = /^[a-z]+/.exec(plain)?.[0];
  if (first && YES.has(first)) return true;
  if (first && NO.has(first)) return false;
  const yes = /\byes\b/.test(plain);
  const no = /\bno\b/.test(plain);
  return yes === no ? null : yes;
}
