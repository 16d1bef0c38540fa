import { z } from 'zod';
import { DomainError } from '../shared/decider.js';

/**
 * Names, ids and document shapes accepted by the document database. The key rules are those
 * FerretDB v1.24 imposes (no `$`-prefixed or dotted keys, no arrays directly inside arrays) and
 * apply on both configurations, so a document accepted by one is accepted by the other.
 */
export const COLLECTION_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const RESERVED_PREFIXES = ['system', 'admin', 'local', 'config'];

export const collectionNameSchema = z
  .string()
  .regex(COLLECTION_NAME_RE, 'must be 1-64 characters: letters, digits, "_" or "-", starting with a letter or digit')
  .refine((n) => !RESERVED_PREFIXES.some((p) => n.toLowerCase().startsWith(p)), `must not start with a reserved prefix (${RESERVED_PREFIXES.join(', ')})`);

export const DOCUMENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const documentIdSchema = z.string().regex(DOCUMENT_ID_RE, 'must be 1-128 characters: letters, digits, "_", ".", ":" or "-", starting with a letter or digit');

export interface DocumentLimits {
  maxBytes: number;
  maxDepth: number;
}

export type JsonDocument = Record<string, unknown>;

const invalid = (path: string, message: string) =>
  new DomainError('INVALID_DOCUMENT', `${path}: ${message}`, 'invalid', { path });

const isPlain = (v: unknown): v is JsonDocument =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Throws INVALID_DOCUMENT naming the first offending path, or DOCUMENT_TOO_LARGE. Returns the size in bytes. */
export function checkDocument(doc: unknown, limits: DocumentLimits, root = 'document'): number {
  if (!isPlain(doc)) throw invalid(root, 'must be a JSON object');
  walk(doc, root, 1, false, limits.maxDepth);
  const bytes = Buffer.byteLength(JSON.stringify(doc), 'utf8');
  if (bytes > limits.maxBytes) {
    throw new DomainError('DOCUMENT_TOO_LARGE', `the document is ${bytes} bytes; at most ${limits.maxBytes} are allowed`, 'invalid', { path: root, bytes, max: limits.maxBytes });
  }
  return bytes;
}

function walk(value: unknown, path: string, depth: number, inArray: boolean, maxDepth: number): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(path, 'numbers must be finite');
    return;
  }
  if (depth > maxDepth) throw invalid(path, `nesting deeper than ${maxDepth} levels`);
  if (Array.isArray(value)) {
    if (inArray) throw invalid(path, 'arrays directly inside arrays are not supported');
    value.forEach((item, i) => walk(item, `${path}.${i}`, depth + 1, true, maxDepth));
    return;
  }
  if (!isPlain(value)) throw invalid(path, 'only JSON values are allowed');
  for (const [key, child] of Object.entries(value)) {
    checkKey(key, `${path}.${key}`);
    walk(child, `${path}.${key}`, depth + 1, false, maxDepth);
  }
}

function checkKey(key: string, path: string): void {
  if (!key.length) throw invalid(path, 'field names must not be empty');
  if (key.length > 256) throw invalid(path, 'field names are at most 256 characters');
  if (key.startsWith('$')) throw invalid(path, 'field names must not start with "$"');
  if (key.includes('.')) throw invalid(path, 'field names must not contain "."');
  if (key.includes('\u0000')) throw invalid(path, 'field names must not contain NUL');
}

/**
 * True when `value` nests objects/arrays deeper than `max`. Iterative: request bodies are parsed
 * without a depth limit, and the recursive walks that follow (update checks, schema compilation)
 * would overflow the stack on a 1 MB body of nested objects.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
