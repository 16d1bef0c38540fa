/**
 * The OpenAPI document is one fuzzers can use (issue 19 item 2), for every route of the table:
 * - no pattern uses `\p{…}` classes (tools in other languages cannot generate from them): the
 *   control-character rule of names is spelled as ranges and still refuses what `\p{Cc}` refused;
 * - every create operation links to the operations taking the id it created, and following a link
 *   against the running service reaches the created resource (what schemathesis' stateful phase does);
 * - request bodies carry examples the route's own validator accepts, and the service accepts them;
 * - every operation documents 400 (a malformed URL or encoding answers it anywhere).
 * Regressions of earlier fuzzing findings (issue 19) are at the end.
 */
import { expect } from 'chai';
import { buildOpenApi, exampleFor } from '../../api/openapi.js';
import { allRoutes } from '../../api/routes/index.js';
import { flowNameSchema } from '../../domain/flows/limits.js';
import { orgNameSchema } from '../../domain/orgs/events.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

type Json = any;
const doc: Json = buildOpenApi(allRoutes, { title: 'test', version: '0' });
const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));

function patterns(node: Json, at: string, out: Array<[string, string]> = []): Array<[string, string]> {
  if (Array.isArray(node)) node.forEach((v, i) => patterns(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) k === 'pattern' && typeof v === 'string' ? out.push([at, v]) : patterns(v, `${at}/${k}`, out);
  return out;
}

/** Resolves `$response.body#/a/b` against an answer. */
const pointer = (body: Json, expression: string) => expression.replace('$response.body#', '').split('/').slice(1).reduce((node, key) => node?.[key], body);

describe('OpenAPI document for fuzzers', () => {
  it('no pattern uses \\p{…} Unicode property classes', () => {
    const all = patterns(doc, '#');
    expect(all.length).to.be.greaterThan(10);
    const bad = all.filter(([, p]) => /\\[pP]\{/.test(p));
    expect(bad, bad.map(([at, p]) => `${at}: ${p}`).join('\n')).to.deep.equal([]);
  });

  it('names refuse every control character \\p{Cc} refused (C0, DEL, C1) and accept the rest', () => {
    const cc = /^\p{Cc}$/u;
    for (let code = 0; code <= 0x2000; code++) {
      const ch = String.fromCharCode(code);
      if (/\s/.test(ch) && !cc.test(ch)) continue; // trimmed by the schemas
      const name = `a${ch}b`;
      for (const schema of [flowNameSchema, orgNameSchema]) expect(schema.safeParse(name).success, `U+${code.toString(16)}`).to.equal(!cc.test(ch));
    }
  });

  it('links every create operation to the operations that take its id', () => {
    const withChildren = operations.filter(
      ({ path, method, op }) => method === 'post' && (op.responses['201'] ?? op.responses['200'])?.content && operations.some((o) => o.path.startsWith(`${path}/{`)),
    );
    const linked = withChildren.filter(({ op }) => Object.values(op.responses).some((r: Json) => r.links));
    expect(linked.length).to.be.greaterThan(8);
    const ids = new Set(operations.map(({ op }) => op.operationId));
    for (const { op } of operations) {
      for (const response of Object.values(op.responses) as Json[]) {
        for (const link of Object.values(response.links ?? {}) as Json[]) {
          expect(ids.has(link.operationId), link.operationId).to.equal(true);
          for (const expression of Object.values(link.parameters) as string[]) expect(expression).to.match(/^\$(response\.body#\/\S+|request\.path\.\w+)$/);
        }
      }
    }
    const flowLinks = doc.paths['/flows'].post.responses['201'].links;
    expect(flowLinks.getFlow.parameters).to.deep.equal({ flowId: '$response.body#/flow/id' });
    const nodeLinks = doc.paths['/flows/{flowId}/nodes'].post.responses['201'].links;
    expect(Object.values(nodeLinks).map((l: Json) => l.parameters)).to.deep.include({ nodeId: '$response.body#/node/id', flowId: '$request.path.flowId' });
  });

  it("request bodies carry examples the route's validator accepts", () => {
    const bodies = allRoutes.filter((r) => r.body);
    const missing = bodies.filter((r) => doc.paths[r.path][r.method.toLowerCase()].requestBody.content['application/json'].example === undefined).map((r) => `${r.method} ${r.path}`);
    for (const route of bodies) {
      const media = doc.paths[route.path][route.method.toLowerCase()].requestBody.content['application/json'];
      if (media.example !== undefined) expect(route.body!.safeParse(media.example).success, `${route.method} ${route.path}`).to.equal(true);
    }
    console.log(`      ${bodies.length - missing.length} of ${bodies.length} request bodies have an example; without: ${missing.join(', ') || 'none'}`);
    expect(missing.length, missing.join(', ')).to.be.at.most(Math.floor(bodies.length / 10));
    // A declared example (`.meta({ examples })` on the body schema) wins over a generated one.
    expect(exampleFor(flowNameSchema, { type: 'string', examples: ['Declared'] }, {})).to.equal('Declared');
  });

  it('every operation documents 400 and the error body for it', () => {
    for (const { path, method, op } of operations) {
      expect(op.responses['400'], `${method} ${path}`).to.not.equal(undefined);
      const schema = op.responses['400'].content?.['application/json']?.schema;
      expect(schema, `${method} ${path}`).to.not.equal(undefined);
    }
  });
});

for (const mode of availableModes()) {
  describe(`following the document's links against the service (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode);
    });
    after(async () => svc?.stop());

    it('the example of POST /flows creates a flow; each link from it reaches the flow (GET), and nested creates chain', async () => {
      const user = await registerUser(svc.baseUrl);
      const create = doc.paths['/flows'].post;
      const created = await call(svc.baseUrl, 'POST', '/flows', create.requestBody.content['application/json'].example, user.auth);
      expect(created.status, created.text).to.equal(201);
      const getFlow = create.responses['201'].links.getFlow;
      const flowId = pointer(created.body, getFlow.parameters.flowId);
      const got = await call(svc.baseUrl, 'GET', `/flows/${flowId}`, undefined, user.auth);
      expect(got.status).to.equal(200);

      const nodeCreate = doc.paths['/flows/{flowId}/nodes'].post;
      const node = await call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes`, nodeCreate.requestBody.content['application/json'].example, user.auth);
      expect(node.status, node.text).to.equal(201);
      const update = Object.values(nodeCreate.responses['201'].links).find((l: Json) => l.operationId === 'deleteNode') as Json;
      const nodeId = pointer(node.body, update.parameters.nodeId);
      const deleted = await call(svc.baseUrl, 'DELETE', `/flows/${flowId}/nodes/${nodeId}`, undefined, user.auth);
      expect(deleted.status, deleted.text).to.be.within(200, 204);
    });

    it('every example the service is given answers below 500 (most of them 2xx)', async () => {
      const user = await registerUser(svc.baseUrl);
      const problems: string[] = [];
      let fine = 0;
      for (const route of allRoutes.filter((r) => r.body && !r.path.includes('{') && r.method === 'POST' && !r.path.startsWith('/auth/'))) {
        const example = doc.paths[route.path].post.requestBody.content['application/json'].example;
        if (example === undefined) continue;
        const res = await call(svc.baseUrl, 'POST', route.path, example, user.auth);
        if (res.status >= 500) problems.push(`POST ${route.path}: ${res.status} ${res.text.slice(0, 200)}`);
        else fine++;
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
      expect(fine).to.be.greaterThan(5);
    });
  });
}

describe('regressions of fuzzing findings', () => {
  it('GET /workflows?cursor=<16 KiB> answered an undocumented 431: every operation documents 431 HEADERS_TOO_LARGE with the error body', () => {
    for (const { path, method, op } of operations) expect(op.responses['431']?.content?.['application/json']?.schema, `${method} ${path}`).to.deep.equal({ $ref: '#/components/schemas/Error' });
  });

  it('POST /extension/ai and POST /agents/…/messages with stream: true answered an undocumented text/event-stream: a status described as text/event-stream documents that media type', () => {
    const streaming = operations.filter(({ op }) => Object.values(op.responses).some((r: Json) => /text\/event-stream/.test(r.description)));
    expect(streaming.length).to.be.greaterThan(2);
    for (const { path, method, op } of streaming) {
      for (const [status, response] of Object.entries(op.responses) as Array<[string, Json]>) {
        if (!/text\/event-stream/.test(response.description)) continue;
        // Validated per event (schemathesis ST108): an object of the event's fields, not the stream's text.
        expect(response.content['text/event-stream']?.schema?.type, `${method} ${path} ${status}`).to.equal('object');
        expect(Object.keys(response.content['text/event-stream'].schema.properties)).to.include.members(['event', 'data', 'id']);
      }
    }
  });

  it('POST /app-instances/{instanceId}/playbook answered 500 when the LLM provider failed: an untranslated provider error is 502 with its code', async () => {
    const Koa = (await import('koa')).default;
    const { createServer } = await import('node:http');
    const { errorHandler } = await import('../../api/middleware/error-handler.js');
    const { LlmProviderError } = await import('../../ports/llm-errors.js');
    const { createLogger } = await import('../../infra/logger/pino.js');
    const app = new Koa();
    app.use(errorHandler(createLogger('silent')));
    app.use((ctx) => {
      const code = ctx.path === '/none' ? 'PROVIDER_NOT_CONFIGURED' : ctx.path === '/slow' ? 'PROVIDER_TIMEOUT' : 'PROVIDER_ERROR';
      throw new LlmProviderError({ provider: 'openai', code, message: `openai: ${code}` });
    });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      for (const [path, status, code] of [['/down', 502, 'PROVIDER_ERROR'], ['/slow', 502, 'PROVIDER_TIMEOUT'], ['/none', 400, 'PROVIDER_NOT_CONFIGURED']] as const) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, path).to.equal(status);
        const body = (await res.json()) as Json;
        expect(body).to.deep.equal({ success: false, error: { code, message: `openai: ${code}`, details: { provider: 'openai' } } });
      }
    } finally {
      server.close();
    }
  });
});
