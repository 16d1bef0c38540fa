import { z } from 'zod';
import type { RouteDef } from './route.js';

const errorSchema = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(route: RouteDef) {
  const out: unknown[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query]] as const) {
    if (!schema) continue;
    const object = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (object.required ?? []).includes(name), schema: property });
    }
  }
  return out;
}

/** OpenAPI 3.1 built from the same table that registers and validates the routes, so it cannot drift. */
export function buildOpenApi(routes: RouteDef[], info: { title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      const schema = response.schema ? jsonSchema(response.schema, 'output') : Number(status) >= 400 ? errorSchema : undefined;
      responses[status] = schema ? { description: response.description, content: { 'application/json': { schema } } } : { description: response.description };
    }
    if (!responses['400'] && (route.body || route.query || route.params)) {
      responses['400'] = { description: 'invalid input (the field is named in error.details)', content: { 'application/json': { schema: errorSchema } } };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.auth === 'bearer' ? { security: [{ bearer: [] }] } : route.auth === 'trigger-key' ? { security: [{ triggerKey: [] }] } : {}),
      ...(route.permission ? { 'x-permission': route.permission } : {}),
      parameters: parameters(route),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'JWT, API key or CLI token' },
        triggerKey: { type: 'apiKey', in: 'header', name: 'X-Trigger-Key' },
      },
      schemas: { Error: errorSchema },
    },
    paths,
  };
}
