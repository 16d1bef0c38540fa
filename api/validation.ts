import type { z } from 'zod';
import { ApiError, ValidationError } from './errors.js';

/**
 * Deepest nesting a request body may have. Validators and the code behind them walk values
 * recursively, so a body nested 100,000 levels (a few hundred KiB of brackets) would exhaust the
 * stack; no operation needs more than this (document depth and schema nesting have lower limits).
 */
export const MAX_BODY_DEPTH = 100;

/** Measured without recursion, so the check itself cannot overflow. */
export function exceedsDepth(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** Parses one part of the request; every problem names its field as `part.path.to.field`. */
export function parsePart<T extends z.ZodType>(part: 'params' | 'query' | 'body', schema: T | undefined, value: unknown): z.infer<T> {
  if (!schema) return value as z.infer<T>;
  if (part === 'body' && exceedsDepth(value, MAX_BODY_DEPTH)) {
    throw new ApiError('BODY_TOO_DEEP', `the body is nested deeper than ${MAX_BODY_DEPTH} levels`, 'invalid', { field: 'body', max: MAX_BODY_DEPTH });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ValidationError(
    result.error.issues.map((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
      const path = [...issue.path.map(String), ...(keys.length === 1 ? keys : [])];
      const message = issue.code === 'unrecognized_keys' ? `unknown field${keys.length > 1 ? `s ${keys.join(', ')}` : ''}` : issue.message;
      return { field: [part, ...path].join('.'), message };
    }),
  );
}
