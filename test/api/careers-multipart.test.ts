import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMultipart, type MultipartSpec } from '../../api/multipart.js';
import { DomainError } from '../../domain/shared/decider.js';
import { LocalObjectStore } from '../../infra/object-store/local.js';

/**
 * api/multipart.ts on its own (used by careers and the extension's PDF route): limits while
 * streaming, stable codes naming the field, and files streamed onward into the object store.
 */
describe('multipart parsing (api/multipart.ts)', function () {
  this.timeout(30_000);
  let server: Server;
  let port: number;
  let handler: (req: IncomingMessage) => Promise<unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'multipart-'));
  const store = new LocalObjectStore(dir, randomBytes(32), () => new Date());

  before(async () => {
    server = createServer((req, res) => {
      handler(req).then(
        (value) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value)),
        (err) => {
          const e = err as DomainError & { status?: number };
          res.writeHead(e.status ?? (e.kind === 'too_large' ? 413 : 400), { 'content-type': 'application/json' }).end(JSON.stringify({ code: e.code ?? 'UNSUPPORTED_MEDIA_TYPE', details: e.details }));
        },
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (body: Buffer | string, contentType: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': contentType } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const B = 'XyZbOuNdArY';
  const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const file = (name: string, data: Buffer | string, type = 'application/pdf') =>
    Buffer.concat([Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="f.pdf"\r\nContent-Type: ${type}\r\n\r\n`), Buffer.from(data), Buffer.from('\r\n')]);
  const form = (...parts: Array<Buffer | string>) => send(Buffer.concat([...parts.map((p) => Buffer.from(p)), Buffer.from(`--${B}--\r\n`)]), `multipart/form-data; boundary=${B}`);
  const spec: MultipartSpec = { fields: { title: { maxBytes: 10 } }, files: { doc: { maxBytes: 1000, contentTypes: ['application/pdf'] } }, maxFields: 3 };
  const parse = (s: MultipartSpec<unknown> = spec as MultipartSpec<unknown>) => (handler = async (req) => {
    const out = await parseMultipart(req, s);
    return { fields: out.fields, files: Object.fromEntries(Object.entries(out.files).map(([k, f]) => [k, { size: f.size, filename: f.filename, contentType: f.contentType, value: f.value instanceof Uint8Array ? f.value.length : f.value }])) };
  });

  it('parses fields and a file', async () => {
    parse();
    const res = await form(field('title', 'hello'), file('doc', '%PDF-1.7 tiny'));
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ fields: { title: 'hello' }, files: { doc: { size: 13, filename: 'f.pdf', contentType: 'application/pdf', value: 13 } } });
  });

  it('refuses each bound with a stable code naming the field', async () => {
    parse();
    const cases: Array<[Promise<{ status: number; body: any }>, number, string, string | undefined]> = [
      [form(file('doc', randomBytes(1001))), 413, 'FILE_TOO_LARGE', 'body.doc'],
      [form(field('title', 'x'.repeat(11))), 400, 'FIELD_TOO_LARGE', 'body.title'],
      [form(field('other', 'x')), 400, 'UNEXPECTED_FIELD', 'body.other'],
      [form(file('other', 'x')), 400, 'UNEXPECTED_FILE', 'body.other'],
      [form(file('doc', 'a'), file('doc', 'b')), 400, 'DUPLICATE_FILE', 'body.doc'],
      [form(field('title', 'a'), field('title', 'b')), 400, 'DUPLICATE_FIELD', 'body.title'],
      [form(file('doc', 'x', 'text/html')), 400, 'FILE_TYPE_NOT_ALLOWED', 'body.doc'],
      [form(field('title', 'a'), field('a', '1'), field('b', '1'), field('c', '1')), 400, 'UNEXPECTED_FIELD', 'body.a'],
      [send(`--${B}\r\nContent-Disposition: form-data; name="title"\r\n\r\nunterminated`, `multipart/form-data; boundary=${B}`), 400, 'MALFORMED_MULTIPART', 'body'],
      [send('{"a":1}', 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE', undefined],
      // Fuzzing findings: a part named "" reached busboy's listeners with no name and crashed the process;
      // names of Object.prototype members must not pass for allowed fields.
      [send(`--${B}\r\nContent-Disposition: form-data; name=""\r\n\r\nx\r\n--${B}--\r\n`, `multipart/form-data; boundary=${B}`), 400, 'UNEXPECTED_FIELD', 'body.'],
      [send(`--${B}\r\nContent-Disposition: form-data; name=""; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\nx\r\n--${B}--\r\n`, `multipart/form-data; boundary=${B}`), 400, 'UNEXPECTED_FILE', 'body.'],
      [form(field('constructor', 'x')), 400, 'UNEXPECTED_FIELD', 'body.constructor'],
      [form(file('__proto__', 'x')), 400, 'UNEXPECTED_FILE', 'body.__proto__'],
    ];
    for (const [pending, status, code, fieldName] of cases) {
      const res = await pending;
      expect(res.status, `${code}: ${JSON.stringify(res.body)}`).to.equal(status);
      expect(res.body.code).to.equal(code);
      if (fieldName) expect(res.body.details.field).to.equal(fieldName);
    }
  });

  it('counts fields while streaming: more than maxFields is TOO_MANY_FIELDS', async () => {
    parse({ ...spec, ignoreUnknownFields: true } as MultipartSpec<unknown>);
    const res = await form(field('a', '1'), field('b', '1'), field('c', '1'), field('d', '1'));
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('TOO_MANY_FIELDS');
  });

  it('streams a file onward into the object store, and keeps nothing of one past its bound', async () => {
    const streamed: MultipartSpec<unknown> = {
      fields: {},
      files: { doc: { maxBytes: 3 * 1024 * 1024 } },
      onFile: (info, body) => store.put(`uploads/${info.field}`, body, { contentType: info.contentType, maxBytes: 3 * 1024 * 1024 }),
    };
    parse(streamed);
    const bytes = randomBytes(2 * 1024 * 1024);
    const ok = await form(file('doc', bytes));
    expect(ok.status).to.equal(200);
    expect(ok.body.files.doc.value).to.deep.include({ key: 'uploads/doc', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    expect(Buffer.from((await store.get('uploads/doc'))!).equals(bytes)).to.equal(true);

    parse({ ...streamed, onFile: (info, body) => store.put(`uploads/big`, body, { contentType: info.contentType }) });
    const refused = await form(file('doc', randomBytes(3 * 1024 * 1024 + 1)));
    expect(refused.status).to.equal(413);
    expect(refused.body.code).to.equal('FILE_TOO_LARGE');
    expect(await store.get('uploads/big')).to.equal(null);
  });
});
