import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import jsonpatch from 'fast-json-patch';
import mergePatch from 'json-merge-patch';
import {
  APP_INSTANCE_LIMITS,
  APP_INSTANCE_TYPES,
  checkInstanceData,
  dataProblems,
  protoKeyPath,
  type AppInstanceType,
  type DataOp,
  type Json,
  type JsonObject,
} from '../domain/app-instances/index.js';
import { DomainError } from '../domain/shared/decider.js';

/**
 * The data side of app instances that needs packages domain/ may not import: the JSON Schema
 * validator (ajv) for each type's schema, JSON Merge Patch (RFC 7396, `json-merge-patch`) and JSON
 * Patch (RFC 6902, `fast-json-patch`), and the diff (`compare`) that turns any change into the
 * add/remove/replace operations the events record.
 */
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
// Module scope is safe: compiled validators of the constant type schemas, the same for every service; no per-service data.
const validators = new Map<AppInstanceType, ValidateFunction>();

function validatorOf(type: AppInstanceType): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    validate = ajv.compile(APP_INSTANCE_TYPES[type].schema);
    validators.set(type, validate);
  }
  return validate;
}

function messageOf(error: ErrorObject): { pointer: string; message: string } {
  let pointer = error.instancePath;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    pointer = `${pointer}/${extra.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    message = 'is not a member of this type (no additional properties)';
  } else if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    pointer = `${pointer}/${missing}`;
    message = 'is required';
  } else if (error.keyword === 'enum') {
    message = `must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { pointer, message };
}

/** The type's JSON Schema, then its invariants and limits: 400 DATA_SCHEMA_VIOLATION naming each path, 413 DATA_TOO_LARGE. */
export function validateInstanceData(type: AppInstanceType, data: unknown): JsonObject {
  const validate = validatorOf(type);
  if (!validate(data)) {
    const seen = new Set<string>();
    const problems = (validate.errors ?? []).map(messageOf).filter((p) => {
      // anyOf/nullable reports every branch: keep one message per place.
      if (seen.has(p.pointer)) return false;
      seen.add(p.pointer);
      return true;
    });
    throw dataProblems(problems.length > 0 ? problems : [{ pointer: '', message: 'does not match the schema' }]);
  }
  checkInstanceData(type, data as JsonObject);
  return data as JsonObject;
}

export type DataPatch = { format: 'merge-patch'; patch: JsonObject } | { format: 'json-patch'; ops: unknown[] };

const invalidPatch = (message: string, details: Record<string, unknown>) => new DomainError('INVALID_PATCH', message, 'invalid', details);

/**
 * The data after the patch (nothing is changed in place). A JSON Patch that is malformed answers
 * 400 INVALID_PATCH naming the operation (`body.<index>`); one that does not apply to the current
 * data (a `test` that fails, a path that does not exist) 409 PATCH_CONFLICT with the operation's
 * index, as RFC 5789 suggests for a patch the resource's state refuses.
 */
export function applyDataPatch(data: JsonObject, patch: DataPatch): Json {
  const proto = protoKeyPath(patch.format === 'merge-patch' ? patch.patch : patch.ops);
  if (proto !== null) throw invalidPatch('a member named __proto__ is not allowed in a patch', { fields: [{ field: `body${proto.replace(/\//g, '.')}`, message: 'a member named __proto__ is not allowed' }] });
  if (patch.format === 'merge-patch') {
    // json-merge-patch stops (silently, keeping the rest unapplied) at a member named constructor or prototype: refuse those instead.
    const guarded = reservedMergeKey(patch.patch);
    if (guarded !== null) throw invalidPatch(`a JSON Merge Patch may not hold a member named ${guarded.key}`, { fields: [{ field: guarded.field, message: `a member named ${guarded.key} is not allowed in a merge patch` }] });
    return mergePatch.apply(structuredClone(data), patch.patch) as Json;
  }
  if (patch.ops.length > APP_INSTANCE_LIMITS.patchOps) {
    throw invalidPatch(`a JSON Patch holds at most ${APP_INSTANCE_LIMITS.patchOps} operations`, { fields: [{ field: 'body', message: `at most ${APP_INSTANCE_LIMITS.patchOps} operations` }] });
  }
  const malformed = jsonpatch.validate(patch.ops as jsonpatch.Operation[], undefined);
  if (malformed) throw invalidPatch(`operation ${malformed.index}: ${firstLine(malformed.message)}`, { fields: [{ field: `body.${malformed.index ?? 0}`, message: malformed.name }] });
  try {
    return jsonpatch.applyPatch(structuredClone(data), patch.ops as jsonpatch.Operation[], true, false, true).newDocument as Json;
  } catch (err) {
    if (!(err instanceof jsonpatch.JsonPatchError)) throw err;
    // fast-json-patch's `index` is 0 for every operation when it validates as it applies: find the operation itself.
    const found = patch.ops.indexOf(err.operation);
    const index = found >= 0 ? found : (err.index ?? 0);
    const op = patch.ops[index] as { op?: string; path?: string } | undefined;
    if (err.name === 'TEST_OPERATION_FAILED') {
      throw new DomainError('PATCH_TEST_FAILED', `operation ${index}: test of ${op?.path} failed`, 'conflict', { index, op: op?.op, path: op?.path });
    }
    const structural = ['SEQUENCE_NOT_AN_ARRAY', 'OPERATION_NOT_AN_OBJECT', 'OPERATION_OP_INVALID', 'OPERATION_PATH_INVALID', 'OPERATION_FROM_REQUIRED', 'OPERATION_VALUE_REQUIRED', 'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED'];
    if (structural.includes(err.name)) throw invalidPatch(`operation ${index}: ${firstLine(err.message)}`, { fields: [{ field: `body.${index}`, message: err.name }] });
    throw new DomainError('PATCH_CONFLICT', `operation ${index} (${op?.op} ${op?.path}) does not apply to the current data: ${firstLine(err.message)}`, 'conflict', { index, op: op?.op, path: op?.path, reason: err.name });
  }
}

const firstLine = (s: string) => s.split('\n')[0];

function reservedMergeKey(patch: Json, path = 'body'): { key: string; field: string } | null {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return null;
  for (const [key, value] of Object.entries(patch)) {
    if (key === 'constructor' || key === 'prototype') return { key, field: `${path}.${key}` };
    const inner = reservedMergeKey(value, `${path}.${key}`);
    if (inner) return inner;
  }
  return null;
}

/** What changed from `before` to `after`, as add/remove/replace operations (replayed by the fold). */
export function diffData(before: JsonObject, after: JsonObject): DataOp[] {
  return jsonpatch.compare(before, after) as DataOp[];
}
