import { z } from 'zod';
import type { RouteDef } from './route.js';

/** The error body of every 4xx/5xx (DESIGN.md §7): `{success: false, error: {code, message, details?}}`. */
const errorSchema = {
  type: 'object',
  required: ['success', 'error'],
  additionalProperties: false,
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', description: 'stable, machine-readable (e.g. VALIDATION_FAILED, FLOW_NOT_FOUND)' },
        message: { type: 'string' },
        details: { description: 'what went wrong in detail; for bad input `fields: [{field, message}]` naming `part.path.to.field`' },
      },
    },
  },
};
const ERROR_REF = { $ref: '#/components/schemas/Error' };
/** One event of a text/event-stream answer, as SSE parsers (and schemathesis) read it; its names and data are in the status's description. */
const SSE_EVENT = {
  type: 'object',
  description: 'one server-sent event: `event` names it, `data` is its JSON text (see the description)',
  properties: { event: { type: 'string' }, data: { type: 'string' }, id: { type: 'string' }, retry: { type: 'integer', minimum: 0 } },
};

/** What each derived or declared error status means when a route does not say more. */
const STATUS_TEXT: Record<number, string> = {
  400: 'invalid input: VALIDATION_FAILED naming the field in error.details (or INVALID_JSON, INVALID_ENCODING, BODY_TOO_DEEP, a domain code)',
  401: 'UNAUTHENTICATED: no or invalid credentials',
  402: 'payment required: the budget is spent',
  403: 'FORBIDDEN: the credential lacks the permission',
  404: "not found (missing, deleted or another tenant's)",
  409: 'conflict with the current state',
  410: 'gone',
  412: 'PRECONDITION_FAILED: If-Match names a version the resource moved on from',
  413: 'PAYLOAD_TOO_LARGE: the body (or a part of it) is larger than the limit',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'unprocessable',
  429: 'RATE_LIMITED (Retry-After)',
  431: 'HEADERS_TOO_LARGE: the request line and headers together are larger than the limit (16 KiB)',
  500: 'INTERNAL_ERROR',
  502: 'an upstream service failed',
  503: 'SERVICE_UNAVAILABLE: a server the service depends on (read store, key-value store, bus) did not answer; nothing was acknowledged, retry after Retry-After seconds',
  504: 'an upstream service timed out',
};

/**
 * Collects the components shared by every operation. zod's JSON Schemas carry their own `$defs`
 * (recursive schemas such as `z.json()`): embedded in the document, `#/$defs/__schema0` would point
 * at the document's root, so each definition is hoisted to `components/schemas` (one entry per
 * distinct definition, named by what it is) and every reference rewritten.
 */
class Components {
  readonly schemas: Record<string, unknown> = { Error: errorSchema };
  private readonly byShape = new Map<string, string>();

  constructor() {
    // Named first so every use of the JSON value type shares one component with a readable name.
    this.hoist((z.toJSONSchema(z.object({ value: z.json() })) as { $defs: Record<string, Record<string, unknown>> }).$defs, 'JsonValue');
  }

  jsonSchema(schema: z.ZodType, io: 'input' | 'output', hint: string): Record<string, unknown> {
    const { $schema: _ignored, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
    if (!$defs) return rest;
    const names = this.hoist($defs as Record<string, Record<string, unknown>>, hint);
    return rewriteRefs(rest, names) as Record<string, unknown>;
  }

  /** Adds `$defs` to the components (reusing an equal one) and answers the local → component name map. */
  private hoist(defs: Record<string, Record<string, unknown>>, hint: string): Map<string, string> {
    const names = new Map<string, string>();
    const local = Object.keys(defs);
    // A definition's shape with the local names normalized, so the same type found twice is one component.
    const shapeOf = (name: string) => {
      const { $schema: _s, $defs: _d, ...body } = defs[name]!;
      return JSON.stringify(body).replace(/#\/\$defs\/(\w+)/g, (_m, ref: string) => `#/$defs/${ref === name ? 'SELF' : local.indexOf(ref)}`);
    };
    for (const [i, name] of local.entries()) {
      const shape = shapeOf(name);
      const known = this.byShape.get(shape);
      if (known) {
        names.set(name, known);
        continue;
      }
      let component = local.length === 1 ? hint : `${hint}${i}`;
      for (let n = 2; this.schemas[component]; n++) component = `${hint}${n}`;
      this.byShape.set(shape, component);
      names.set(name, component);
    }
    for (const name of local) {
      const component = names.get(name)!;
      if (this.schemas[component]) continue;
      const { $schema: _s, $defs: _d, ...body } = defs[name]!;
      this.schemas[component] = rewriteRefs(body, names);
    }
    return names;
  }
}

function rewriteRefs(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, names));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
      const name = names.get(v.slice('#/$defs/'.length));
      if (!name) throw new Error(`unresolvable schema reference ${v}`);
      out[key] = `#/components/schemas/${name}`;
    } else out[key] = rewriteRefs(v, names);
  }
  return out;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function parameters(route: RouteDef, components: Components) {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
    if (!schema) continue;
    const object = components.jsonSchema(schema, 'input', `${pascal(route.operationId)}${pascal(where)}`) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const { description, ...propertySchema } = property as { description?: string };
      out.push({ name, in: where, required: where === 'path' || (object.required ?? []).includes(name), ...(description ? { description } : {}), schema: propertySchema });
    }
  }
  return out;
}

/**
 * Every status a route answers: the ones it declares (`responses`, `errors`) and the ones the
 * pipeline in app.ts gives it — 401 on authenticated routes, 403 where a permission is checked,
 * 404 where the path names a resource, 400 where there is input, 413/415 where there is a body.
 */
export function statusesOf(route: RouteDef): number[] {
  const statuses = new Set<number>([...Object.keys(route.responses).map(Number), ...(route.errors ?? [])]);
  if (route.auth !== 'none') statuses.add(401);
  if (route.permission) statuses.add(403);
  if (route.params) statuses.add(404);
  // Input, and anywhere a URL or body that is not valid percent-encoding or UTF-8 (INVALID_ENCODING).
  statuses.add(400);
  // Anywhere: a request line and headers over Node's limit (16 KiB), e.g. a long query (HEADERS_TOO_LARGE).
  statuses.add(431);
  // Anywhere: a server underneath did not answer (SERVICE_UNAVAILABLE, Retry-After).
  statuses.add(503);
  if (route.multipart) statuses.add(400);
  if (route.body || route.multipart) {
    statuses.add(413);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}

/** OpenAPI 3.1 built from the same table that registers and validates the routes, so it cannot drift. */
export function buildOpenApi(routes: RouteDef[], info: { title: string; version: string }) {
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const name = pascal(route.operationId);
    const responses: Record<string, unknown> = {};
    for (const status of statusesOf(route)) {
      const declared = (route.responses as Record<number, { description: string; schema?: z.ZodType } | undefined>)[status];
      const description = declared?.description ?? STATUS_TEXT[status] ?? 'error';
      const schema = declared?.schema
        ? components.jsonSchema(declared.schema, 'output', `${name}${status}`)
        : status === 431
          ? ERROR_REF // answered by Node's parser hook (client-errors.ts) before any route renders its own format
          : status >= 400
          ? route.errorSchema
            ? components.jsonSchema(route.errorSchema, 'output', `${name}Error`)
            : route.renderError
              ? { type: 'object', description: "the error in this route's own wire format" }
              : ERROR_REF
          : undefined;
      const beyondSeed = route.seedStatuses && !route.seedStatuses.includes(status);
      // A status whose description names text/event-stream (routes answering SSE) documents that media type too.
      const eventStream = /text\/event-stream/.test(description) ? { 'text/event-stream': { schema: SSE_EVENT } } : {};
      const content = { ...(schema ? { 'application/json': { schema } } : {}), ...eventStream };
      responses[status] = {
        description,
        ...(Object.keys(content).length ? { content } : {}),
        ...(beyondSeed ? { 'x-beyond-seed': true } : {}),
      };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth === 'bearer' ? { security: [{ bearer: [] }] } : route.auth === 'trigger-key' ? { security: [{ triggerKey: [] }] } : { security: [] }),
      ...(route.permission ? { 'x-permission': route.permission } : {}),
      ...(route.seedStatuses ? { 'x-seed-statuses': route.seedStatuses } : {}),
      parameters: parameters(route, components),
      ...(route.body ? { requestBody: requestBody(route.body, components.jsonSchema(route.body, 'input', `${name}Body`), components.schemas) } : {}),
      ...(route.multipart ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: components.jsonSchema(route.multipart, 'input', `${name}Form`) } } } } : {}),
      responses,
    };
  }
  addLinks(paths, components.schemas);
  return {
    openapi: '3.1.0',
    info: { ...info, description: 'Errors: `{"success": false, "error": {"code", "message", "details"}}` (components/schemas/Error).' },
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'JWT, API key or CLI token' },
        triggerKey: { type: 'apiKey', in: 'header', name: 'X-Trigger-Key' },
      },
      schemas: components.schemas,
    },
    paths,
  };
}

type Schema = Record<string, any>;

/** The request body with an example that the route's own schema accepts (none when no candidate passes). */
function requestBody(zodSchema: z.ZodType, schema: Schema, schemas: Record<string, unknown>) {
  const example = exampleFor(zodSchema, schema, schemas);
  return { required: true, content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } } };
}

/**
 * An example body built from the JSON Schema (declared `examples`/`default` first, then the
 * smallest value each keyword allows), checked against the zod schema that validates requests:
 * required properties only, then every property. A route can always give its own with
 * `.meta({ examples: [...] })` on the body schema.
 */
export function exampleFor(zodSchema: z.ZodType, schema: Schema, schemas: Record<string, unknown>): unknown {
  for (const optional of [false, true]) {
    const candidate = exampleOf(schema, schemas, optional, 0);
    if (candidate !== undefined && zodSchema.safeParse(candidate).success) return candidate;
  }
  return undefined;
}

const STRING_FORMATS: Record<string, string> = {
  email: 'user@example.com',
  'date-time': '2030-01-01T00:00:00.000Z',
  date: '2030-01-01',
  time: '12:00:00',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  duration: 'PT1M',
};

function exampleOf(schema: Schema | undefined, schemas: Record<string, unknown>, optional: boolean, depth: number, key = ''): unknown {
  if (!schema || depth > 8) return undefined;
  if (typeof schema.$ref === 'string') return exampleOf(schemas[schema.$ref.replace('#/components/schemas/', '')] as Schema, schemas, optional, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const options = (schema[key] as Schema[]).filter((o) => o.type !== 'null');
      for (const option of options) {
        const value = exampleOf(option, schemas, optional, depth + 1, key);
        if (value !== undefined) return value;
      }
    }
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Schema) => exampleOf(s, schemas, optional, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type ?? (schema.properties ? 'object' : undefined)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if (!optional && !required.has(key)) continue;
        const value = exampleOf(property, schemas, optional, depth + 1, key);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    case 'array': {
      const item = exampleOf(schema.items as Schema, schemas, optional, depth + 1);
      const count = Math.max(schema.minItems ?? 0, optional && item !== undefined ? 1 : 0);
      return item === undefined ? [] : Array.from({ length: count }, () => item);
    }
    case 'string':
      return stringExample(schema, key);
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      const value = min ?? Math.min(1, max ?? 1);
      return type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return schema.properties || schema.type ? undefined : {};
  }
}

function stringExample(schema: Schema, key = ''): string | undefined {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Infinity;
  const fits = (s: string) => s.length >= min && s.length <= max && (!schema.pattern || safeTest(schema.pattern, s));
  const candidates = [
    ...(schema.format && STRING_FORMATS[schema.format] ? [STRING_FORMATS[schema.format]!] : []),
    ...(/e-?mail/i.test(key) ? ['user@example.com'] : /url|uri|endpoint|href/i.test(key) ? ['https://example.com/'] : []),
    'example',
    'example-1',
    'Example',
    'a',
    'A',
    '1',
    'example_1',
    'example.com',
    'https://example.com/',
    '0123456789abcdef0123456789abcdef',
    'user@example.com',
    'ABCD-EFGH',
  ];
  for (const c of candidates) {
    const padded = c.length < min ? c + 'x'.repeat(min - c.length) : c;
    if (fits(padded)) return padded;
  }
  return undefined;
}

function safeTest(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    try {
      return new RegExp(pattern).test(value);
    } catch {
      return false;
    }
  }
}

/**
 * OpenAPI `links` from every create operation to the operations that take what it created, derived
 * from the paths alone: `POST /x` (or `POST /x/{a}/y`) answering 2xx creates what `/x/{xId}…` names,
 * so each operation under `/x/{xId}` (any method, any depth, no parameter beyond the creator's and
 * `xId`) gets a link whose `xId` is the id in the create answer (a property named `xId`, else the
 * `id` of the object named like the resource, else the shallowest `id`) and whose other parameters
 * are the create request's. Fuzzers (schemathesis' stateful phase) follow them to reach real ids.
 */
export function addLinks(paths: Record<string, Record<string, any>>, schemas: Record<string, unknown>) {
  const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const paramsOf = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  for (const creator of operations) {
    if (creator.method !== 'post') continue;
    const status = ['201', '200'].find((s) => creator.op.responses[s]?.content?.['application/json']?.schema);
    if (!status) continue;
    const response = creator.op.responses[status];
    const schema = response.content['application/json'].schema as Schema;
    const creatorParams = new Set(paramsOf(creator.path));
    const links: Record<string, unknown> = {};
    for (const target of operations) {
      const rest = target.path.startsWith(`${creator.path}/{`) ? target.path.slice(creator.path.length + 2) : null;
      if (rest === null) continue;
      const idParam = rest.slice(0, rest.indexOf('}'));
      if (!/^\w+$/.test(idParam) || creatorParams.has(idParam)) continue;
      if (!paramsOf(target.path).every((p) => p === idParam || creatorParams.has(p))) continue;
      const pointer = idPointer(schema, schemas, idParam);
      if (!pointer) continue;
      const parameters: Record<string, string> = { [idParam]: `$response.body#${pointer}` };
      for (const p of creatorParams) parameters[p] = `$request.path.${p}`;
      links[target.op.operationId] = {
        operationId: target.op.operationId,
        parameters,
        description: `${target.method.toUpperCase()} ${target.path} with the ${idParam} this answer created`,
      };
    }
    if (Object.keys(links).length) response.links = links;
  }
}

/** The JSON pointer of the created resource's id inside a create answer's schema, if there is one. */
function idPointer(schema: Schema, schemas: Record<string, unknown>, idParam: string): string | null {
  const stem = idParam.replace(/Id$/, '').toLowerCase();
  const resolve = (s: Schema | undefined): Schema | undefined => {
    for (let i = 0; s && typeof s.$ref === 'string' && i < 10; i++) s = schemas[s.$ref.replace('#/components/schemas/', '')] as Schema;
    return s;
  };
  const isString = (s: Schema | undefined) => {
    const r = resolve(s);
    return r?.type === 'string' || (Array.isArray(r?.type) && r!.type.includes('string'));
  };
  const found: Array<{ pointer: string; score: number }> = [];
  const walk = (node: Schema | undefined, pointer: string, parentKey: string, depth: number) => {
    const s = resolve(node);
    if (!s || depth > 3 || !s.properties) return;
    const required = new Set<string>(s.required ?? []);
    for (const [key, property] of Object.entries(s.properties as Record<string, Schema>)) {
      const here = `${pointer}/${key}`;
      if (required.has(key) && isString(property)) {
        if (key === idParam) found.push({ pointer: here, score: (depth === 0 ? 100 : 30) - depth });
        else if (key === 'id') found.push({ pointer: here, score: (parentKey && (parentKey.toLowerCase().startsWith(stem) || stem.startsWith(parentKey.toLowerCase())) ? 50 : 10) - depth });
      }
      walk(property, here, key, depth + 1);
    }
  };
  walk(schema, '', '', 0);
  found.sort((a, b) => b.score - a.score);
  return found[0]?.pointer ?? null;
}
