import { validationFailed } from '../flows/guards.js';
import { issuesToProblems } from '../flows/validate-node.js';
import { runError } from './errors.js';
import { markChecked } from '../shared/events.js';
import { runEventSchemas, type RunEventData, type RunEventOf, type RunEventType } from './events.js';

/**
 * An event built from command input, checked against its schema so that a bad command is a
 * VALIDATION_FAILED (400) for its caller, not a rejected append (the handler treats that as a bug).
 */
export function checkedEvent<K extends RunEventType>(type: K, data: RunEventData<K>): RunEventOf<K> {
  const parsed = runEventSchemas[type].safeParse(data);
  if (!parsed.success) throw validationFailed(issuesToProblems(parsed.error.issues, '', data));
  return markChecked({ type, data } as RunEventOf<K>, runEventSchemas[type]);
}

const encoder = new TextEncoder();

/**
 * A value as the store will give it back (undefined dropped, NaN → null) and its UTF-8 JSON size.
 * Values JSON cannot carry (BigInt, cycles) are a VALIDATION_FAILED on `field`.
 */
export function asJson(value: unknown, field: string): { value: unknown; bytes: number } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    throw validationFailed([{ field, message: `must be JSON (${(err as Error).message})` }]);
  }
  if (text === undefined) throw validationFailed([{ field, message: 'must be JSON' }]);
  return { value: JSON.parse(text), bytes: encoder.encode(text).length };
}

export const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export function tooLarge(limit: string, max: number, actual: number) {
  return runError('LIMIT_EXCEEDED', `limit ${limit} is ${max} bytes (this would make ${actual})`, { limit, max, actual });
}
