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

/** What each derived or declared error status means when a route does not say more. */
const STATUS_TEXT: Record<number, string> = {
  400: 'invalid input: VALIDATION_FAILED naming the field in error.details (or INVALID_JSON, BODY_TOO_DEEP, a domain code)',
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
  500: 'INTERNAL_ERROR',
  502: 'an upstream service failed',
  503: 'unavailable',
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
  if (route.params || route.query || route.body) statuses.add(400);
  if (route.body) {
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
        : status >= 400
          ? route.errorSchema
            ? components.jsonSchema(route.errorSchema, 'output', `${name}Error`)
            : route.renderError
              ? { type: 'object', description: "the error in this route's own wire format" }
              : ERROR_REF
          : undefined;
      const beyondSeed = route.seedStatuses && !route.seedStatuses.includes(status);
      responses[status] = {
        description,
        ...(schema ? { content: { 'application/json': { schema } } } : {}),
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
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: components.jsonSchema(route.body, 'input', `${name}Body`) } } } } : {}),
      responses,
    };
  }
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
