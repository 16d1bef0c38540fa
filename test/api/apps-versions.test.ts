import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../support/http.js';
import { TestClock } from '../support/clock.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from './orgs-support.js';

/** Versions over HTTP: snapshots, exact restores (byte for byte, later files gone, never destroying), dates that never change. */
type Auth = Record<string, string>;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const mode of availableModes()) {
  describe(`apps versions API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    const clock = new TestClock();
    let owner: RegisteredUser;
    const api = (method: string, path: string, auth: Auth, body?: unknown, headers: Auth = {}) => call(svc.baseUrl, method, path, body, { ...auth, ...headers });
    const filesOf = async (appId: string) => (await api('GET', `/apps/${appId}/files`, owner.auth)).body.files as Array<{ path: string; content: string; encoding: string; sha256: string; size: number }>;

    before(async () => {
      svc = await startTestService(mode, {}, { clock });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
    });

    it('restore brings back every file of the snapshot byte for byte (binary included), removes later files, and restoring twice is the same', async () => {
      const created = await api('POST', '/apps', owner.auth, { name: 'Versioned', contract: { input: { type: 'object', properties: { q: { type: 'string' } } }, output: { type: 'object' } } });
      const appId = created.body.app.id as string;
      const flow = await api('POST', '/flows', owner.auth, { name: 'backend' });
      expect((await api('POST', `/apps/${appId}/flow`, owner.auth, { flowId: flow.body.flow.id })).status).to.equal(200);

      const binary = randomBytes(4096); // every byte value, likely, and not valid UTF-8
      const icon = Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 0, 0, 255, 254, 253]);
      const v1Files = [
        { path: 'index.html', content: '<!doctype html>\n<title>v1</title>\r\n<p>ünïcödé ✓ 🎉</p>\n' },
        { path: 'js/app.js', content: 'window.x = "v1";\n' },
        { path: 'img/noise.png', content: binary.toString('base64'), encoding: 'base64' },
        { path: 'favicon.ico', content: icon.toString('base64'), encoding: 'base64' },
        { path: 'empty.txt', content: '' },
      ];
      const put1 = await api('PUT', `/apps/${appId}/files`, owner.auth, { files: v1Files });
      expect(put1.status, put1.text).to.equal(200);
      const snapshotFiles = await filesOf(appId);

      const v1 = await api('POST', `/apps/${appId}/versions`, owner.auth, { label: 'first' });
      expect(v1.status, v1.text).to.equal(201);
      const version = v1.body.version;
      expect(version).to.deep.include({ number: 1, label: 'first', fileCount: 5, flowId: flow.body.flow.id, appVersion: 2 });
      expect(version.flowVersion, 'the linked flow\'s version').to.equal(0);
      expect(version.files.find((f: any) => f.path === 'img/noise.png')).to.deep.include({ sha256: sha(binary), size: 4096, encoding: 'base64' });
      const takenAt = version.createdAt;

      clock.advance(60_000);
      const changed = await api('PUT', `/apps/${appId}/files`, owner.auth, {
        files: [
          { path: 'index.html', content: '<p>v2</p>' },
          { path: 'img/noise.png', content: randomBytes(100).toString('base64'), encoding: 'base64' },
          { path: 'later/added.js', content: 'added later' },
          { path: 'later/more.css', content: 'b{}' },
        ],
        delete: ['js/app.js', 'empty.txt'],
      });
      expect(changed.status, changed.text).to.equal(200);
      await api('PUT', `/apps/${appId}/contract`, owner.auth, { input: { type: 'object', properties: { other: { type: 'number' } } }, output: { type: 'object' } });
      await api('DELETE', `/apps/${appId}/flow`, owner.auth);
      const v2 = await api('POST', `/apps/${appId}/versions`, owner.auth, {});
      expect(v2.body.version).to.deep.include({ number: 2, label: null, flowId: null, flowVersion: null });

      clock.advance(60_000);
      const restored = await api('POST', `/apps/${appId}/versions/${version.id}/restore`, owner.auth);
      expect(restored.status, restored.text).to.equal(200);
      expect(restored.body).to.deep.include({ restored: true, versionId: version.id });
      expect(restored.body.app).to.deep.include({ flowId: flow.body.flow.id, fileCount: 5 });
      expect(restored.body.app.contract.input.properties).to.have.key('q');

      const after = await filesOf(appId);
      expect(after, 'every file back exactly, later files gone').to.deep.equal(snapshotFiles);
      const noise = after.find((f) => f.path === 'img/noise.png')!;
      expect(Buffer.from(noise.content, 'base64').equals(binary), 'binary byte for byte').to.equal(true);
      expect(Buffer.from(after.find((f) => f.path === 'favicon.ico')!.content, 'base64').equals(icon)).to.equal(true);
      expect(after.find((f) => f.path === 'index.html')!.content).to.equal(v1Files[0].content);
      for (const path of ['later/added.js', 'later/more.css']) expectError(await api('GET', `/apps/${appId}/files?path=${path}`, owner.auth), 404, 'APP_FILE_NOT_FOUND');

      const head = restored.body.app.version;
      const again = await api('POST', `/apps/${appId}/versions/${version.id}/restore`, owner.auth);
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.deep.include({ restored: false });
      expect(again.body.app.version, 'restoring twice is the same').to.equal(head);
      expect(await filesOf(appId)).to.deep.equal(snapshotFiles);

      // Nothing was destroyed: v2 still restores to the later state, and back again.
      const toV2 = await api('POST', `/apps/${appId}/versions/${v2.body.version.id}/restore`, owner.auth);
      expect(toV2.body.restored).to.equal(true);
      expect((await filesOf(appId)).map((f) => f.path)).to.deep.equal(['favicon.ico', 'img/noise.png', 'index.html', 'later/added.js', 'later/more.css']);
      await api('POST', `/apps/${appId}/versions/${version.id}/restore`, owner.auth);
      expect(await filesOf(appId)).to.deep.equal(snapshotFiles);

      const types = (await svc.services.eventStore.readStream(`app-${appId}`)).map((e) => e.type);
      expect(types.filter((t) => t === 'AppVersionRestored')).to.have.length(3);
      expect(types.filter((t) => t === 'AppFilesChanged')).to.have.length(2);

      // The list: newest first, pages, and dates untouched by restores.
      const list = await api('GET', `/apps/${appId}/versions?limit=1`, owner.auth);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.items.map((v: any) => v.number)).to.deep.equal([2]);
      const rest = await api('GET', `/apps/${appId}/versions?limit=1&cursor=${list.body.nextCursor}`, owner.auth);
      expect(rest.body.items.map((v: any) => [v.number, v.createdAt])).to.deep.equal([[1, takenAt]]);
      expect(rest.body.nextCursor).to.equal(null);
      expectError(await api('GET', `/apps/${appId}/versions?cursor=abc`, owner.auth), 400, 'VALIDATION_FAILED');
      expectError(await api('POST', `/apps/${appId}/versions/nope/restore`, owner.auth), 404, 'APP_VERSION_NOT_FOUND');
    });

    it('a restore with a stale If-Match is 412 and changes nothing', async () => {
      const created = await api('POST', '/apps', owner.auth, { name: 'Guarded' });
      const appId = created.body.app.id as string;
      await api('PUT', `/apps/${appId}/files`, owner.auth, { files: [{ path: 'a.js', content: '1' }] });
      const v = await api('POST', `/apps/${appId}/versions`, owner.auth, {});
      await api('PUT', `/apps/${appId}/files`, owner.auth, { files: [{ path: 'a.js', content: '2' }] });
      expectError(await api('POST', `/apps/${appId}/versions/${v.body.version.id}/restore`, owner.auth, undefined, { 'If-Match': '"1"' }), 412, 'PRECONDITION_FAILED');
      expect((await filesOf(appId))[0].content).to.equal('2');
    });
  });
}
