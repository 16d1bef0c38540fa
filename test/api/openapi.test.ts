/**
 * The served OpenAPI document (GET /api/openapi.json) is valid and complete: every `$ref` resolves
 * inside it, Redocly's linter (recommended rules) finds no error, every operation documents the
 * statuses the pipeline gives it with the error body, the four operations the seed specifies carry
 * exactly the seed's statuses and fields, and the docs page (Swagger UI from node_modules) renders it.
 * Response validation of every answer the API suite receives lives in test/support/http.ts.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';

type Json = any;

/** Every `$ref` of the document with the JSON pointer it names, resolved against the document itself. */
function unresolvableRefs(doc: Json): string[] {
  const bad: string[] = [];
  const resolve = (ref: string) => {
    if (!ref.startsWith('#')) return undefined;
    let node: Json = doc;
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
      node = node[key];
    }
    return node;
  };
  const walk = (node: Json, at: string) => {
    if (Array.isArray(node)) return node.forEach((v, i) => walk(v, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && resolve(value) === undefined) bad.push(`${at}: ${value}`);
      else walk(value, `${at}/${key}`);
    }
  };
  walk(doc, '#');
  return bad;
}

function operations(doc: Json): Array<{ name: string; path: string; method: string; op: Json }> {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, op })),
  );
}

const keysOf = (schema: Json) => Object.keys(schema?.properties ?? {}).sort();

/** The seed's tables: statuses and (for the answers it specifies) the fields of the body. */
const SEED = [
  { method: 'post', path: '/flows/{flowId}/nodes', statuses: [201, 400, 401, 404], body: { status: 201, fields: ['message', 'node', 'success'], nested: { node: ['data', 'id', 'position', 'type'] } } },
  {
    method: 'post',
    path: '/flows/{flowId}/nodes/{nodeId}/process',
    statuses: [200, 401, 404, 500],
    body: { status: 200, fields: ['executionTime', 'nodeId', 'processId', 'result', 'success', 'timestamp'], nested: { result: ['conditionalResults', 'metadata', 'output', 'usage'] } },
  },
  { method: 'post', path: '/messaging/sessions/{sessionId}/webhook', statuses: [200, 401, 404], body: { status: 200, fields: ['success', 'webhook'], nested: { webhook: ['events', 'isActive', 'url'] } } },
  { method: 'get', path: '/auth/google/callback', statuses: [302, 400], body: null },
  { method: 'get', path: '/auth/github/callback', statuses: [302, 400], body: null },
];

describe('OpenAPI document (GET /api/openapi.json)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let doc: Json;
  before(async () => {
    svc = await startTestService('embedded');
    const res = await call(svc.baseUrl, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => svc?.stop());

  it('resolves every $ref inside the document (0 unresolvable); recursive schemas are components', () => {
    const bad = unresolvableRefs(doc);
    expect(bad, bad.join('\n')).to.deep.equal([]);
    expect(JSON.stringify(doc)).not.to.contain('#/$defs/');
    expect(doc.components.schemas.JsonValue.anyOf).to.be.an('array');
    expect(doc.components.schemas.Error.required).to.deep.equal(['success', 'error']);
  });

  it('passes `redocly lint` with the recommended rules: no errors (warnings printed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc, null, 2));
      const bin = join(process.cwd(), 'node_modules', '.bin', 'redocly');
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
      // Exit status 1 on errors: the report is on stdout either way.
      const { stdout } = await promisify(execFile)(bin, ['lint', file, '--extends=recommended', '--format=json'], { env, maxBuffer: 64 * 1024 * 1024 }).catch((err) => err as { stdout: string });
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> };
      const describe = (p: (typeof report.problems)[number]) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`;
      const warnings = report.problems.filter((p) => p.severity === 'warn');
      if (warnings.length) console.log(`      redocly: ${warnings.length} warnings\n${warnings.map((p) => `        ${describe(p)}`).join('\n')}`);
      const errors = report.problems.filter((p) => p.severity === 'error');
      expect(errors.map(describe)).to.deep.equal([]);
      expect(report.totals.errors).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every operation documents its statuses: a 2xx/3xx, 401 when authenticated, 403 with a permission, 404 with a path id, 400 with input, the error body for 4xx/5xx', () => {
    const problems: string[] = [];
    for (const { name, path, op } of operations(doc)) {
      const statuses = Object.keys(op.responses).map(Number);
      if (!statuses.some((s) => s >= 200 && s < 400)) problems.push(`${name}: no success status`);
      if (op.security?.length && !statuses.includes(401)) problems.push(`${name}: authenticated without 401`);
      if (op['x-permission'] && !statuses.includes(403)) problems.push(`${name}: a permission without 403`);
      if (path.includes('{') && !statuses.includes(404)) problems.push(`${name}: a path id without 404`);
      if ((op.parameters?.length || op.requestBody) && !statuses.includes(400)) problems.push(`${name}: input without 400`);
      for (const status of statuses.filter((s) => s >= 400)) {
        const schema = op.responses[status].content?.['application/json']?.schema;
        if (!schema) problems.push(`${name} ${status}: no body schema`);
      }
      if (!op.operationId) problems.push(`${name}: no operationId`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
    const ids = operations(doc).map((o) => o.op.operationId);
    expect(new Set(ids).size, 'operationIds are unique').to.equal(ids.length);
  });

  it("the seed's four operations carry exactly the seed's statuses and fields", () => {
    const resolve = (schema: Json) => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    for (const seed of SEED) {
      const op = doc.paths[seed.path]?.[seed.method];
      const name = `${seed.method.toUpperCase()} ${seed.path}`;
      expect(op, name).to.be.an('object');
      const seedStatuses = Object.entries(op.responses as Record<string, Json>).filter(([, r]) => !r['x-beyond-seed']).map(([s]) => Number(s));
      expect(seedStatuses, `${name}: the seed's statuses`).to.deep.equal(seed.statuses);
      expect(op['x-seed-statuses'], name).to.deep.equal(seed.statuses);
      for (const status of seed.statuses.filter((s) => s >= 400)) {
        expect(op.responses[status].content['application/json'].schema, `${name} ${status}`).to.deep.equal({ $ref: '#/components/schemas/Error' });
      }
      if (seed.body) {
        const schema = resolve(op.responses[seed.body.status].content['application/json'].schema);
        expect(keysOf(schema), `${name} ${seed.body.status}`).to.deep.equal(seed.body.fields);
        expect([...schema.required].sort(), `${name} ${seed.body.status} required`).to.deep.equal(seed.body.fields);
        for (const [field, nested] of Object.entries(seed.body.nested)) {
          expect(keysOf(resolve(schema.properties[field])), `${name} ${seed.body.status} ${field}`).to.deep.equal(nested);
        }
      } else {
        expect(op.responses[302].content, `${name} 302 has no body (Location header)`).to.equal(undefined);
      }
    }
    const processNode = doc.paths['/flows/{flowId}/nodes/{nodeId}/process'].post.responses[200].content['application/json'].schema;
    expect(keysOf(processNode.properties.result.properties.usage)).to.deep.equal(['cost', 'total_tokens']);
  });

  it('GET /api/docs: Swagger UI served from node_modules (no CDN) over /api/openapi.json, "try it" against this service', async () => {
    const page = await call(svc.baseUrl, 'GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    expect(page.text).not.to.match(/(src|href)="https?:/);
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'init.js']) {
      expect(page.text).to.contain(`/api/docs/assets/${asset}`);
      const res = await call(svc.baseUrl, 'GET', `/docs/assets/${asset}`);
      expect(res.status, asset).to.equal(200);
      expect(res.headers.get('content-type'), asset).to.match(asset.endsWith('.css') ? /text\/css/ : /javascript/);
      expect(res.text.length, asset).to.be.greaterThan(asset === 'init.js' ? 50 : 10_000);
    }
    const init = await call(svc.baseUrl, 'GET', '/docs/assets/init.js');
    expect(init.text).to.contain("url: '/api/openapi.json'");
    // "Try it out" calls the document's server, which is this service's /api.
    expect(doc.servers).to.deep.equal([{ url: '/api' }]);
    expect((await call(svc.baseUrl, 'GET', '/docs/assets/nope.js')).status).to.equal(404);
  });
});
