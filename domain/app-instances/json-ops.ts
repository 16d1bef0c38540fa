import { DomainError } from '../shared/decider.js';
import type { DataOp, Json } from './events.js';

/**
 * Pure JSON helpers of the context: JSON Pointers (RFC 6901), the replay of recorded data changes
 * (add / remove / replace, copy-on-write along the path, so a fold never copies a whole megabyte),
 * sizes, and which changes touch the same place (the If-Match rule of PATCH …/data).
 */

/** `''` → `[]`; `/a/b~1c` → `['a', 'b/c']`. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new DomainError('INVALID_POINTER', `JSON Pointer ${JSON.stringify(pointer)} must start with /`, 'invalid', { path: pointer });
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function formatPointer(segments: Array<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/** A pointer as a field name of an error: `/cards/0/title` → `data.cards.0.title`. */
export function fieldOfPointer(pointer: string): string {
  const segments = parsePointer(pointer);
  return ['data', ...segments].join('.');
}

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

const cannotApply = (op: DataOp, why: string) => new DomainError('PATCH_CONFLICT', `${op.op} ${op.path}: ${why}`, 'conflict', { op: op.op, path: op.path });

function arrayIndex(op: DataOp, key: string, length: number, forAdd: boolean): number {
  if (forAdd && key === '-') return length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw cannotApply(op, `${JSON.stringify(key)} is not an array index`);
  const index = Number(key);
  if (index > length || (!forAdd && index === length)) throw cannotApply(op, `index ${index} is out of bounds (length ${length})`);
  return index;
}

function setObjectKey(target: Record<string, Json>, key: string, value: Json) {
  // defineProperty: a key named __proto__ stays data, never a prototype.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function applyAt(node: Json, segments: string[], i: number, op: DataOp): Json {
  const key = segments[i];
  const last = i === segments.length - 1;
  if (Array.isArray(node)) {
    const copy = node.slice();
    if (!last) {
      const index = arrayIndex(op, key, node.length, false);
      copy[index] = applyAt(node[index], segments, i + 1, op);
      return copy;
    }
    const index = arrayIndex(op, key, node.length, op.op === 'add');
    if (op.op === 'add') copy.splice(index, 0, op.value as Json);
    else if (op.op === 'remove') copy.splice(index, 1);
    else copy[index] = op.value as Json;
    return copy;
  }
  if (isObject(node)) {
    const copy: Record<string, Json> = {};
    for (const k of Object.keys(node)) setObjectKey(copy, k, node[k]);
    if (!last) {
      if (!has(node, key)) throw cannotApply(op, `no member ${JSON.stringify(key)}`);
      setObjectKey(copy, key, applyAt(node[key], segments, i + 1, op));
      return copy;
    }
    if (op.op === 'remove') {
      if (!has(node, key)) throw cannotApply(op, `no member ${JSON.stringify(key)}`);
      delete copy[key];
    } else {
      if (op.op === 'replace' && !has(node, key)) throw cannotApply(op, `no member ${JSON.stringify(key)}`);
      setObjectKey(copy, key, op.value as Json);
    }
    return copy;
  }
  throw cannotApply(op, 'the parent is not an object or an array');
}

/** The document after `ops`, in order; `doc` is not changed (unchanged branches are shared). */
export function applyDataOps(doc: Json, ops: readonly DataOp[]): Json {
  let current = doc;
  for (const op of ops) {
    const segments = parsePointer(op.path);
    if (segments.length === 0) {
      if (op.op === 'remove') throw cannotApply(op, 'the root cannot be removed');
      current = op.value as Json;
      continue;
    }
    current = applyAt(current, segments, 0, op);
  }
  return current;
}

const encoder = new TextEncoder();
/** UTF-8 bytes of the value's JSON text. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/** True when one pointer is the other or inside it: changes there touch the same place. */
export function pointersOverlap(a: string, b: string): boolean {
  const x = parsePointer(a);
  const y = parsePointer(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The pairs of `mine` and `theirs` that touch the same place (first few, for the error's details). */
export function overlappingPaths(mine: readonly string[], theirs: readonly string[], max = 10): Array<{ path: string; changedPath: string }> {
  const found: Array<{ path: string; changedPath: string }> = [];
  for (const p of mine) {
    for (const q of theirs) {
      if (pointersOverlap(p, q)) {
        found.push({ path: p, changedPath: q });
        if (found.length >= max) return found;
        break;
      }
    }
  }
  return found;
}

/** The first member named `__proto__` anywhere in the value (refused: it would poison JavaScript objects downstream). */
export function protoKeyPath(value: unknown, path: Array<string | number> = []): string | null {
  const stack: Array<{ v: unknown; p: Array<string | number> }> = [{ v: value, p: path }];
  while (stack.length > 0) {
    const { v, p } = stack.pop()!;
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ v: item, p: [...p, i] }));
    else if (isObject(v)) {
      for (const k of Object.keys(v)) {
        if (k === '__proto__') return formatPointer([...p, k]);
        stack.push({ v: v[k], p: [...p, k] });
      }
    }
  }
  return null;
}
