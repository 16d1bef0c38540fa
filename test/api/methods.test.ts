/**
 * Every answer is the service's: each path of the route table (whatever context added it) is called
 * with every HTTP method. A method the path serves answers (without credentials or input) a
 * documented status below 500 with the JSON error body; any other method answers 405 with `Allow`
 * naming exactly the methods the route table registers there (HEAD with GET, OPTIONS) and the error
 * body METHOD_NOT_ALLOWED; OPTIONS answers 204 with the same `Allow`. Unknown paths, broken
 * percent-encoding, bodies that are not UTF-8, not JSON, of the wrong type, compressed unknowingly
 * or too large, headers over Node's limit and method tokens HTTP does not know: each a 4xx JSON body
 * with its code.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { allRoutes } from '../../api/routes/index.js';
import { call } from '../support/http.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
/** Paths the app serves beside the route table. */
const EXTRA = [
  { method: 'GET', path: '/openapi.json' },
  { method: 'GET', path: '/docs' },
  { method: 'GET', path: '/docs/assets/{name}' },
];

const templateRegex = (template: string) => new RegExp(`^${template.split(/(\{\w+\})/).map((p) => (p.startsWith('{') ? '[^/]+' : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('')}$`);
/** A value no literal segment of any route equals, so the concrete path matches only parameter templates there. */
const concrete = (template: string) => template.replace(/\{(\w+)\}/g, (_m, name: string) => `zz-${name}-1`);

const table = [...allRoutes.map((r) => ({ method: r.method as string, path: r.path, renderError: Boolean(r.renderError) })), ...EXTRA.map((e) => ({ ...e, renderError: false }))];
const paths = [...new Set(table.map((r) => r.path))];

/** The methods the router serves on a concrete path: every template it matches, HEAD with GET, OPTIONS. */
function allowedOn(path: string): Set<string> {
  const methods = new Set<string>(['OPTIONS']);
  for (const route of table) {
    if (!templateRegex(route.path).test(path)) continue;
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
  }
  return methods;
}

const isErrorBody = (body: any) => body?.success === false && typeof body.error?.code === 'string' && typeof body.error?.message === 'string';

function raw(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer, prefix = '/api'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: `${prefix}${path}`, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes bytes on a fresh socket and answers everything the server sent back. */
function rawSocket(baseUrl: string, bytes: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

const jsonOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

for (const mode of availableModes()) {
  describe(`every method on every route answers the service's JSON (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode);
    });
    after(async () => svc?.stop());

    it(`walks ${paths.length} paths × ${METHODS.length} methods`, async () => {
      const problems: string[] = [];
      let served = 0;
      let refused = 0;
      for (const template of paths) {
        const path = concrete(template);
        const allowed = allowedOn(path);
        const ownFormat = table.some((r) => r.renderError && templateRegex(r.path).test(path));
        for (const method of METHODS) {
          const where = `${method} ${template}`;
          if (allowed.has(method) && method !== 'OPTIONS') {
            // Served: no credentials, an empty JSON object as body where a body is expected.
            const withBody = ['POST', 'PUT', 'PATCH'].includes(method);
            if (template === '/docs' || template === '/docs/assets/{name}' || template === '/openapi.json' || template.endsWith('/stream') || template.endsWith('/events')) {
              // Non-JSON answers (HTML, assets, event streams): status only, never 5xx.
              const res = await raw(svc.baseUrl, method, path, { accept: 'application/json' });
              if (res.status >= 500) problems.push(`${where}: ${res.status} ${res.text.slice(0, 200)}`);
              served++;
              continue;
            }
            const res = await call(svc.baseUrl, method, path, withBody ? {} : undefined);
            served++;
            if (res.status >= 500) problems.push(`${where}: ${res.status} ${res.text.slice(0, 200)}`);
            if (method !== 'HEAD' && res.status >= 400 && !ownFormat && !isErrorBody(res.body)) problems.push(`${where}: ${res.status} without the error body: ${res.text.slice(0, 200)}`);
            continue;
          }
          const res = await raw(svc.baseUrl, method, path, method === 'TRACE' ? {} : { 'content-type': 'application/json' }, ['POST', 'PUT', 'PATCH'].includes(method) ? Buffer.from('{}') : undefined);
          refused++;
          const allow = String(res.headers.allow ?? '').split(/,\s*/).filter(Boolean).sort();
          const expected = [...allowed].sort();
          if (method === 'OPTIONS') {
            if (res.status !== 204 || allow.join() !== expected.join()) problems.push(`${where}: ${res.status} Allow [${allow}] (expected 204 Allow [${expected}])`);
            continue;
          }
          if (res.status !== 405) problems.push(`${where}: ${res.status} (expected 405): ${res.text.slice(0, 200)}`);
          if (allow.join() !== expected.join()) problems.push(`${where}: Allow [${allow}], expected [${expected}]`);
          if (method === 'HEAD') continue;
          if (!/^application\/json/.test(String(res.headers['content-type']))) problems.push(`${where}: content-type ${res.headers['content-type']}`);
          const body = JSON.parse(res.text || 'null');
          if (!ownFormat && (!isErrorBody(body) || body.error.code !== 'METHOD_NOT_ALLOWED')) problems.push(`${where}: body ${res.text.slice(0, 200)}`);
        }
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
      expect(served).to.be.greaterThan(paths.length);
      expect(refused).to.be.greaterThan(paths.length * 3);
    });

    it('unknown paths answer 404 ROUTE_NOT_FOUND with any method inside /api, and outside /api but for the console pages', async () => {
      for (const method of METHODS) {
        for (const path of ['/api/no-such-thing', '/api/flows/x/no/such/sub', '/elsewhere']) {
          const res = await raw(svc.baseUrl, method, path, {}, undefined, '');
          // GET and HEAD outside /api are the web console's pages (its router answers unknown ones).
          if (path === '/elsewhere' && (method === 'GET' || method === 'HEAD')) {
            expect(res.status, `${method} ${path}`).to.be.oneOf([200, 503]);
            expect(String(res.headers['content-security-policy']), `${method} ${path}`).to.contain("script-src 'self'");
            continue;
          }
          expect(res.status, `${method} ${path}`).to.equal(404);
          if (method !== 'HEAD') expect(JSON.parse(res.text).error.code, `${method} ${path}`).to.equal('ROUTE_NOT_FOUND');
        }
      }
    });

    it('broken percent-encoding in the path or query answers 400 INVALID_ENCODING', async () => {
      for (const path of ['/flows/%E0%A4%A', '/flows/%FF', '/health?x=%E0%A4%A', '/flows?limit=%C3']) {
        const res = await raw(svc.baseUrl, 'GET', path);
        expect(res.status, path).to.equal(400);
        expect(JSON.parse(res.text).error.code, path).to.equal('INVALID_ENCODING');
      }
    });

    it('bodies: not UTF-8, not JSON, the wrong type, an unknown compression, too large: 4xx with a code', async () => {
      const login = allRoutes.find((r) => r.method === 'POST' && r.path === '/auth/login');
      expect(login, 'POST /auth/login in the route table').to.not.equal(undefined);
      const cases: Array<[string, Record<string, string>, Buffer, number, string]> = [
        ['invalid UTF-8', { 'content-type': 'application/json' }, Buffer.from([0x7b, 0x22, 0x65, 0x6d, 0x61, 0x69, 0x6c, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 400, 'INVALID_ENCODING'],
        ['malformed JSON', { 'content-type': 'application/json' }, Buffer.from('{"email": '), 400, 'INVALID_JSON'],
        ['text instead of JSON', { 'content-type': 'text/plain' }, Buffer.from('hello'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['multipart instead of JSON', { 'content-type': 'multipart/form-data; boundary=x' }, Buffer.from('--x--\r\n'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['a form is parsed (OAuth clients send forms) and validated', { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('email=a%40b.c'), 400, 'VALIDATION_FAILED'],
        ['no type', {}, Buffer.from('{"email":"a@b.c"}'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['no type and no bytes: an empty body, validated as {}', { 'content-length': '0' }, Buffer.alloc(0), 400, 'VALIDATION_FAILED'],
        ['another charset', { 'content-type': 'application/json; charset=latin1' }, Buffer.from('{}'), 415, 'UNSUPPORTED_CHARSET'],
        ['unknown compression', { 'content-type': 'application/json', 'content-encoding': 'zstd-ish' }, Buffer.from('{}'), 415, 'UNSUPPORTED_CONTENT_ENCODING'],
        ['broken gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, Buffer.from('not gzip at all'), 400, 'INVALID_CONTENT_ENCODING'],
        ['too large', { 'content-type': 'application/json' }, Buffer.from(`{"email":"${'a'.repeat(1_100_000)}"}`), 413, 'PAYLOAD_TOO_LARGE'],
      ];
      for (const [what, headers, body, status, code] of cases) {
        const res = await raw(svc.baseUrl, 'POST', '/auth/login', headers, body);
        expect(res.status, `${what}: ${res.text.slice(0, 200)}`).to.equal(status);
        expect(res.headers['content-type'], what).to.match(/^application\/json/);
        expect(JSON.parse(res.text).error.code, what).to.equal(code);
      }
    });

    it('headers over the limit answer 431 HEADERS_TOO_LARGE, unknown method tokens 400, as JSON', async () => {
      const big = await rawSocket(svc.baseUrl, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
      expect(big).to.match(/^HTTP\/1\.1 431 /);
      expect(big).to.match(/content-type: application\/json/i);
      expect(jsonOf(big).error.code).to.equal('HEADERS_TOO_LARGE');
      const weird = await rawSocket(svc.baseUrl, `FROB /api/health HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(weird).to.match(/^HTTP\/1\.1 400 /);
      expect(jsonOf(weird).error.code).to.match(/^(INVALID_METHOD|MALFORMED_REQUEST)$/);
      const garbage = await rawSocket(svc.baseUrl, `GET /api/health HTTP/1.1\r\nHost x\r\n\r\n`);
      expect(garbage).to.match(/^HTTP\/1\.1 400 /);
      expect(jsonOf(garbage).error.code).to.equal('MALFORMED_REQUEST');
    });
  });
}
