import type { z } from 'zod';
import { ValidationError } from './errors.js';

/** Parses one part of the request; every problem names its field as `part.path.to.field`. */
export function parsePart<T extends z.ZodType>(part: 'params' | 'query' | 'body', schema: T | undefined, value: unknown): z.infer<T> {
  if (!schema) return value as z.infer<T>;
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
