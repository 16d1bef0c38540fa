import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApi } from '../../api/openapi.js';
import { allRoutes } from '../../api/routes/index.js';

/** A small fetch wrapper for API tests: JSON in, status, headers and parsed body out. Every answer of our API is checked against the OpenAPI document. */
export async function call(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, init);
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  checkResponse(method, `${baseUrl}${path}`, res.status, res.headers.get('content-type'), text, json);
  return { status: res.status, headers: res.headers, body: json, text };
}

// ---------------------------------------------------------------------------------------------
// Response validation: the document the service serves (built from the same route table), and ajv.
// Every response received through `call()` (or handed to `checkResponse`) must have a documented
// status and, when JSON, a body matching that status's schema. Mismatches are collected and fail
// the run in a root `after` hook that lists them with the test that caused them.

type OpenApiDoc = ReturnType<typeof buildOpenApi>;
interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
export interface ResponseMismatch {
  test: string;
  operation: string;
  status: number;
  problem: string;
}

let doc: OpenApiDoc | undefined;
let operations: Operation[] = [];
const validators = new Map<string, ValidateFunction>();
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, logger: false });
addFormats(ajv);

export const responseMismatches: ResponseMismatch[] = [];
export const responseStats = { validated: 0, operations: new Set<string>() };
let currentTest = '(outside a test)';

function load() {
  if (doc) return;
  doc = buildOpenApi(allRoutes, { title: 'test', version: '0' });
  const escape = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  operations = Object.entries(doc.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      // Literal segments outrank parameters (`/processes/running` before `/processes/{processId}`), as the router does.
      pattern: new RegExp(`^${template.split(/(\{\w+\})/).map((part) => (part.startsWith('{') ? '([^/]+)' : escape(part))).join('')}$`),
      responses: (op as { responses: Operation['responses'] }).responses,
    })),
  );
  const literalness = (t: string) => t.split('/').filter((s) => s && !s.startsWith('{')).length;
  operations.sort((a, b) => literalness(b.template) - literalness(a.template));
}

/** The operation of the document that answers `method url` (only URLs under `/api/`), if any. */
function operationFor(method: string, url: string): Operation | undefined {
  load();
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return undefined;
  }
  if (!pathname.startsWith('/api/')) return undefined;
  const path = pathname.slice('/api'.length).replace(/\/$/, '') || '/';
  return operations.find((op) => op.method === method.toUpperCase() && op.pattern.test(path));
}

/** Checks one response of our API against the document; answers the problem found (also recorded), or null. */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, text: string, json: unknown): string | null {
  const op = operationFor(method, url);
  if (!op) return null; // not one of ours (a fake provider, the docs page) or an unknown route (ROUTE_NOT_FOUND)
  const name = `${op.method} ${op.template}`;
  responseStats.validated++;
  responseStats.operations.add(name);
  const record = (problem: string) => {
    responseMismatches.push({ test: currentTest, operation: name, status, problem });
    return problem;
  };
  const documented = op.responses[String(status)];
  if (!documented) return record(`status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')}); body ${text.slice(0, 300)}`);
  const isJson = /application\/json/i.test(contentType ?? '');
  const schema = documented.content?.['application/json']?.schema;
  if (!isJson) return null; // text, HTML, event streams and empty bodies: the status is what the document says
  if (!schema) return text ? record(`a JSON body that status ${status} does not document: ${text.slice(0, 300)}`) : null;
  const key = `${name} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ ...schema, components: doc!.components });
    validators.set(key, validate);
  }
  if (validate(json)) return null;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
  return record(`body does not match the schema: ${errors.join('; ')}; body ${text.slice(0, 300)}`);
}

// Root hooks (registered once, when the first test file imports this module).
if (typeof beforeEach === 'function' && typeof after === 'function') {
  beforeEach(function () {
    currentTest = this.currentTest?.fullTitle() ?? '(unknown test)';
  });
  after(function () {
    if (responseStats.validated > 0 && process.env.OPENAPI_VALIDATION_QUIET !== 'true') {
      console.log(`  openapi: ${responseStats.validated} responses of ${responseStats.operations.size} operations validated against the document, ${responseMismatches.length} mismatches`);
    }
    if (responseMismatches.length === 0) return;
    const lines = responseMismatches.map((m) => `- ${m.operation} → ${m.status}: ${m.problem}\n    in "${m.test}"`);
    throw new Error(`${responseMismatches.length} responses differ from the OpenAPI document:\n${lines.join('\n')}`);
  });
}
