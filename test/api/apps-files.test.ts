import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from './orgs-support.js';

/** An app's files over HTTP: one change all or nothing, If-Match, path rules (traversal, hostile names, types, sizes) with nothing written. */
type Auth = Record<string, string>;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** ASCII text that needs no JSON escaping, so its size as JSON is its length. */
const randomText = (length: number) => randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);

for (const mode of availableModes()) {
  describe(`apps files API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let appId: string;
    const api = (method: string, path: string, auth: Auth, body?: unknown, headers: Auth = {}) => call(svc.baseUrl, method, path, body, { ...auth, ...headers });
    const put = (body: unknown, headers: Auth = {}) => api('PUT', `/apps/${appId}/files`, owner.auth, body, headers);
    const streamLength = async () => (await svc.services.eventStore.readStream(`app-${appId}`)).length;

    /** The refusal must leave the app's stream and files as they were. */
    async function refusedWithNothingWritten(body: unknown, status: number, code: string, path?: string) {
      const before = await streamLength();
      const filesBefore = (await api('GET', `/apps/${appId}/files`, owner.auth)).body.files;
      const res = await put(body);
      expectError(res, status, code);
      if (path !== undefined) expect(res.body.error.details.path, res.text).to.equal(path);
      expect(await streamLength(), `${code}: nothing appended`).to.equal(before);
      expect((await api('GET', `/apps/${appId}/files`, owner.auth)).body.files, `${code}: files unchanged`).to.deep.equal(filesBefore);
      return res;
    }

    before(async () => {
      svc = await startTestService(mode);
      owner = await registerUser(svc.baseUrl);
      const created = await api('POST', '/apps', owner.auth, { name: 'Files' });
      expect(created.status, created.text).to.equal(201);
      appId = created.body.app.id;
    });
    after(async () => {
      await svc?.stop();
    });

    it('writes many files as one change, answers the tree with contents, one file by ?path=, and deletes in the same change', async () => {
      const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 128]);
      const res = await put({
        files: [
          { path: './index.html', content: '<!doctype html><p>héllo</p>' },
          { path: 'src/app.js', content: 'console.log(1)' },
          { path: 'src/lib/util.ts', content: 'export const x = 1;' },
          { path: 'img/logo.png', content: logo.toString('base64'), encoding: 'base64' },
        ],
      }, { 'If-Match': '"0"' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ changed: true, version: 1, deleted: [], fileCount: 4 });
      expect(res.body.written).to.deep.equal(['index.html', 'src/app.js', 'src/lib/util.ts', 'img/logo.png']);
      expect(res.headers.get('etag')).to.equal('"1"');
      expect((await svc.services.eventStore.readStream(`app-${appId}`)).map((e) => e.type)).to.deep.equal(['AppCreated', 'AppFilesChanged']);

      const all = await api('GET', `/apps/${appId}/files`, owner.auth);
      expect(all.status, all.text).to.equal(200);
      expect(all.headers.get('etag')).to.equal('"1"');
      expect(all.body.files.map((f: any) => f.path)).to.deep.equal(['img/logo.png', 'index.html', 'src/app.js', 'src/lib/util.ts']);
      const png = all.body.files[0];
      expect(png).to.deep.include({ encoding: 'base64', size: logo.length, sha256: sha(logo) });
      expect(Buffer.from(png.content, 'base64').equals(logo)).to.equal(true);
      expect(all.body.files[1]).to.deep.include({ size: Buffer.byteLength('<!doctype html><p>héllo</p>'), sha256: sha(Buffer.from('<!doctype html><p>héllo</p>')) });
      expect(all.body.tree.map((n: any) => [n.type, n.name])).to.deep.equal([['directory', 'img'], ['directory', 'src'], ['file', 'index.html']]);
      expect(all.body.tree[1].children.map((n: any) => n.path)).to.deep.equal(['src/lib', 'src/app.js']);

      const one = await api('GET', `/apps/${appId}/files?path=${encodeURIComponent('./src/app.js')}`, owner.auth);
      expect(one.status, one.text).to.equal(200);
      expect(one.body.file).to.deep.include({ path: 'src/app.js', content: 'console.log(1)' });
      expectError(await api('GET', `/apps/${appId}/files?path=nope.js`, owner.auth), 404, 'APP_FILE_NOT_FOUND');
      expectError(await api('GET', `/apps/${appId}/files?path=${encodeURIComponent('../x.js')}`, owner.auth), 400, 'APP_PATH_TRAVERSAL');

      const next = await put({ files: [{ path: 'src/app.js', content: 'console.log(2)' }], delete: ['src/lib/util.ts'] }, { 'If-Match': '"1"' });
      expect(next.status, next.text).to.equal(200);
      expect(next.body).to.deep.include({ version: 2, written: ['src/app.js'], deleted: ['src/lib/util.ts'], fileCount: 3 });
      const same = await put({ files: [{ path: 'src/app.js', content: 'console.log(2)' }] });
      expect(same.body, 'the same content again changes nothing').to.deep.include({ changed: false, version: 2, written: [] });
    });

    it('a write near the limits (a 512 KiB file, ~750 KiB of JSON in one change) is stored and projected', async () => {
      const big = randomText(512 * 1024);
      const other = randomText(200 * 1024);
      const res = await put({ files: [{ path: 'big/one.txt', content: big }, { path: 'big/two.txt', content: other }] });
      expect(res.status, res.text).to.equal(200);
      const one = await api('GET', `/apps/${appId}/files?path=big/one.txt`, owner.auth);
      expect(one.body.file).to.deep.include({ size: big.length, sha256: sha(Buffer.from(big)) });
      expect(one.body.file.content === big).to.equal(true);
      const listed = (await api('GET', '/apps', owner.auth)).body.items.find((a: { id: string }) => a.id === appId);
      expect(listed.version, 'the list (through the bus in distributed mode) reached the write').to.equal(res.body.version);
      expect(listed.totalBytes).to.equal(res.body.totalBytes);
      const removed = await put({ delete: ['big/one.txt', 'big/two.txt'] });
      expect(removed.body.deleted).to.deep.equal(['big/one.txt', 'big/two.txt']);
    });

    it('If-Match on the app\'s version: a stale one is 412 and nothing is written', async () => {
      const version = (await api('GET', `/apps/${appId}`, owner.auth)).body.app.version as number;
      const before = await streamLength();
      const res = await put({ files: [{ path: 'stale.js', content: '1' }] }, { 'If-Match': `"${version - 1}"` });
      expectError(res, 412, 'PRECONDITION_FAILED');
      expect(res.body.error.details).to.deep.include({ expected: version - 1, actual: version });
      expect(await streamLength()).to.equal(before);
      expectError(await put({ files: [] }, { 'If-Match': 'v1' }), 400, 'VALIDATION_FAILED');
    });

    it('refuses traversal, absolute paths, hostile names and types not allowed, naming the path, with nothing written', async () => {
      const ok = { path: 'fine.js', content: 'fine' };
      const cases: Array<[string, string]> = [
        ['../escape.js', 'APP_PATH_TRAVERSAL'],
        ['src/../../escape.js', 'APP_PATH_TRAVERSAL'],
        ['/etc/passwd.txt', 'APP_PATH_ABSOLUTE'],
        ['C:\\boot.ini.txt', 'APP_PATH_ABSOLUTE'],
        ['src\\..\\escape.js', 'APP_PATH_HOSTILE'],
        ['nul\u0000byte.js', 'APP_PATH_HOSTILE'],
        ['line\nbreak.js', 'APP_PATH_HOSTILE'],
        ['rtl\u202Eexe.js', 'APP_PATH_HOSTILE'],
        ['<img onerror=x>.html', 'APP_PATH_HOSTILE'],
        ['%2e%2e/escape.js', 'APP_PATH_HOSTILE'],
        ['aux.html', 'APP_PATH_HOSTILE'],
        ['run.sh', 'APP_FILE_TYPE_NOT_ALLOWED'],
        ['.env', 'APP_FILE_TYPE_NOT_ALLOWED'],
        ['a//b.js', 'APP_PATH_INVALID'],
      ];
      for (const [path, code] of cases) await refusedWithNothingWritten({ files: [ok, { path, content: 'x' }] }, 400, code, path);
      await refusedWithNothingWritten({ files: [ok], delete: ['../index.html'] }, 400, 'APP_PATH_TRAVERSAL', '../index.html');
      await refusedWithNothingWritten({ files: [ok], delete: ['missing.js'] }, 404, 'APP_FILE_NOT_FOUND', 'missing.js');
      await refusedWithNothingWritten({ files: [ok, { path: 'pic.png', content: 'not base64 text' }] }, 400, 'APP_FILE_ENCODING', 'pic.png');
      await refusedWithNothingWritten({ files: [ok, { path: 'pic.png', content: '***', encoding: 'base64' }] }, 400, 'APP_FILE_BASE64_INVALID', 'pic.png');
      await refusedWithNothingWritten({ files: [ok, { path: './fine.js', content: 'twice' }] }, 400, 'APP_PATH_DUPLICATE', './fine.js');
    });

    it('refuses an oversized file, an oversized change and too many files (413), with nothing written', async () => {
      await refusedWithNothingWritten({ files: [{ path: 'ok.txt', content: 'x' }, { path: 'big.txt', content: 'b'.repeat(512 * 1024 + 1) }] }, 413, 'APP_FILE_TOO_LARGE', 'big.txt');
      await refusedWithNothingWritten({ files: [{ path: 'one.txt', content: 'a'.repeat(400_000) }, { path: 'two.txt', content: 'b'.repeat(400_000) }] }, 413, 'APP_WRITE_TOO_LARGE', 'two.txt');
      const many = Array.from({ length: 500 }, (_, i) => ({ path: `many/f${i}.js`, content: '' }));
      await refusedWithNothingWritten({ files: many }, 413, 'APP_TOO_MANY_FILES');
      const tooManyForSchema = await put({ files: [...many, { path: 'x.js', content: '' }] });
      expectError(tooManyForSchema, 400, 'VALIDATION_FAILED');
    });
  });
}
