import { DomainError } from '../../domain/shared/decider.js';

/** `<context>/<owner>/<id>` segments of letters, digits, `.`, `_`, `-` (no `..`, no empty segment), ≤ 512 characters. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export function assertObjectKey(key: string): void {
  const ok = typeof key === 'string' && key.length > 0 && key.length <= 512 && key.split('/').every((s) => SEGMENT.test(s) && s !== '..' && s !== '.');
  if (!ok) throw new DomainError('OBJECT_KEY_INVALID', 'object keys are /-separated segments of letters, digits, ".", "_" and "-"', 'invalid');
}

export const tooLarge = (maxBytes: number) =>
  new DomainError('FILE_TOO_LARGE', `the file is larger than ${maxBytes} bytes`, 'too_large', { maxBytes });
