import { DomainError } from '../shared/decider.js';
import { EVAL_LIMITS } from './events.js';

/** One uploaded line: the trigger inputs and, optionally, the expected output. */
export interface UploadedCase {
  input: Record<string, unknown>;
  expected: unknown;
}

const invalid = (line: number, message: string) =>
  new DomainError('VALIDATION_FAILED', `line ${line} of the JSONL: ${message}`, 'invalid', { fields: [{ field: 'body.jsonl', message: `line ${line}: ${message}` }] });

/**
 * Cases uploaded as JSON Lines: one object per line, `{"input": {...}, "expected": ...}` (`expected`
 * optional, null when absent); blank lines are skipped. The first bad line refuses the whole upload
 * (400 naming `body.jsonl` and the line), so an upload is all or nothing.
 */
export function parseCasesJsonl(text: string): UploadedCase[] {
  const out: UploadedCase[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    if (out.length >= EVAL_LIMITS.casesPerWrite) throw invalid(i + 1, `one upload holds at most ${EVAL_LIMITS.casesPerWrite} cases`);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw invalid(i + 1, 'not JSON');
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(i + 1, 'must be an object {"input": {...}, "expected": ...}');
    const { input, expected, ...rest } = value as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw invalid(i + 1, `unknown field ${JSON.stringify(extra[0])} (only input and expected)`);
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw invalid(i + 1, '"input" must be an object (the run\'s trigger inputs)');
    out.push({ input: input as Record<string, unknown>, expected: expected === undefined ? null : expected });
  }
  if (out.length === 0) throw invalid(1, 'no cases');
  return out;
}
