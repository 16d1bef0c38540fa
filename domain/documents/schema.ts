import { z } from 'zod';
import { DomainError } from '../shared/decider.js';
import { regexProblem } from './query.js';
import { nestsDeeperThan } from './rules.js';
import { UserRegexError, compileUserRegex, withRe2RegExp } from './regex.js';

/**
 * Optional JSON Schema per collection, enforced on every write by the decider. Compiled by zod 4's
 * `z.fromJSONSchema` (drafts 4 to 2020-12: types, properties, required, additionalProperties,
 * items, enum, const, min/max, lengths, pattern, formats, allOf/anyOf/oneOf/not, local `$ref`);
 * a keyword it cannot compile (an external `$ref`, an unknown type) refuses the schema at creation.
 * The converter builds RegExps from `pattern` and `patternProperties`; it runs with the global
 * RegExp standing for Re2RegExp, so those patterns are matched by RE2 (linear time) on every write.
 */
const compiled = new Map<string, z.ZodType>();
const MAX_CACHED = 500;

function compile(schemaText: string): z.ZodType {
  let schema = compiled.get(schemaText);
  if (schema) return schema;
  schema = withRe2RegExp(() => z.fromJSONSchema(JSON.parse(schemaText)));
  compiled.set(schemaText, schema);
  if (compiled.size > MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  return schema;
}

/** Throws INVALID_SCHEMA (400) when `schema` cannot be compiled or does not describe an object. */
export function checkSchema(schema: unknown): string {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new DomainError('INVALID_SCHEMA', 'schema must be a JSON Schema object', 'invalid', { field: 'body.schema' });
  }
  const type = (schema as { type?: unknown }).type;
  if (type !== undefined && type !== 'object') {
    throw new DomainError('INVALID_SCHEMA', 'schema.type must be "object": documents are objects', 'invalid', { field: 'body.schema.type' });
  }
  if (nestsDeeperThan(schema, MAX_SCHEMA_DEPTH)) {
    throw new DomainError('INVALID_SCHEMA', `schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, 'invalid', { field: 'body.schema' });
  }
  checkPatterns(schema, 'body.schema');
  const text = JSON.stringify(schema);
  try {
    compile(text);
  } catch (err) {
    throw new DomainError('INVALID_SCHEMA', `schema cannot be used: ${(err as Error).message}`, 'invalid', { field: 'body.schema' });
  }
  return text;
}

const MAX_PATTERN_LENGTH = 1024;
/** Objects and arrays inside one schema (the converter and the checks below recurse). */
const MAX_SCHEMA_DEPTH = 64;

/**
 * `pattern` and `patternProperties` run in this process on every write: they must compile with
 * RE2 (no lookaround or backreference, a bounded program) and pass the same screen as search
 * regexes (no nested repetition), so a schema means the same as a search would.
 */
function checkPatterns(node: unknown, at: string): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => checkPatterns(item, `${at}.${i}`));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}.${key}`;
    if (key === 'pattern' && typeof value === 'string') screenPattern(value, here);
    if (key === 'patternProperties' && value !== null && typeof value === 'object') {
      for (const p of Object.keys(value)) screenPattern(p, `${here}.${p}`);
    }
    checkPatterns(value, here);
  }
}

function screenPattern(pattern: string, at: string): void {
  let problem = pattern.length > MAX_PATTERN_LENGTH ? `a pattern is at most ${MAX_PATTERN_LENGTH} characters` : regexProblem(pattern);
  if (problem === null) {
    try {
      compileUserRegex(pattern);
    } catch (err) {
      if (!(err instanceof UserRegexError)) throw err;
      problem = err.reason === 'invalid' ? `not a valid regular expression: ${err.message}` : `not supported by RE2: ${err.message}`;
    }
  }
  if (problem !== null) throw new DomainError('INVALID_SCHEMA', `${at}: ${problem}`, 'invalid', { field: at, path: at });
}

/** Throws SCHEMA_VIOLATION (400) naming the first failing path (`document.address.zip`). */
export function enforceSchema(schemaText: string | null, document: Record<string, unknown>): void {
  if (schemaText === null) return;
  const result = compile(schemaText).safeParse(document);
  if (result.success) return;
  const issues = result.error.issues.slice(0, 20).map((i) => ({ path: ['document', ...i.path.map(String)].join('.'), message: i.message }));
  throw new DomainError('SCHEMA_VIOLATION', `${issues[0].path}: ${issues[0].message}`, 'invalid', { path: issues[0].path, issues });
}
