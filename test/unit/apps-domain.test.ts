import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  appDecider, appVersionSnapshot, contractMismatches, EMPTY_CONTRACT, flowGraphForContract, MAX_APP_FILE_BYTES, MAX_APP_FILES,
  MAX_APP_TOTAL_BYTES, normaliseAppPath, scaffoldFiles,
  type AppCommand, type AppEvent, type AppFileInput,
} from '../../domain/apps/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(appDecider);
const at = '2026-02-01T00:00:00.000Z';
const tenant = { userId: 'u1', orgId: null, workspaceId: null };
const base = { appId: 'a1', tenant, by: 'u1', at };
const sha = (content: string, encoding: 'utf8' | 'base64' = 'utf8') => createHash('sha256').update(Buffer.from(content, encoding)).digest('hex');
const file = (path: string, content: string, encoding: 'utf8' | 'base64' = 'utf8'): AppFileInput => ({ path, content, encoding, sha256: sha(content, encoding) });
const created: AppEvent = { type: 'AppCreated', data: { appId: 'a1', name: 'Quote', description: '', contract: EMPTY_CONTRACT, ownerId: 'u1', orgId: null, workspaceId: null, by: 'u1', at } };
const change = (put: AppFileInput[], remove: string[] = []): AppCommand => ({ ...base, type: 'ChangeAppFiles', put, delete: remove, source: 'api' });
/** The events a command produces on top of `given`, for building histories. */
const after = (given: AppEvent[], command: AppCommand) => [...given, ...spec.given(given).when(command).events()];

describe('apps domain: paths', () => {
  it('normalises a leading ./ and keeps nested paths', () => {
    expect(normaliseAppPath('./src/app.js')).to.equal('src/app.js');
    expect(normaliseAppPath('assets/img/logo.PNG')).to.equal('assets/img/logo.PNG');
  });
  const refused: Array<[string, string]> = [
    ['../secret.js', 'APP_PATH_TRAVERSAL'],
    ['src/../../etc/passwd.txt', 'APP_PATH_TRAVERSAL'],
    ['/etc/passwd.txt', 'APP_PATH_ABSOLUTE'],
    ['C:/windows/x.js', 'APP_PATH_ABSOLUTE'],
    ['~/x.js', 'APP_PATH_ABSOLUTE'],
    ['src\\app.js', 'APP_PATH_HOSTILE'],
    ['a\u0000.js', 'APP_PATH_HOSTILE'],
    ['a\nb.js', 'APP_PATH_HOSTILE'],
    ['evil\u202Egnp.js', 'APP_PATH_HOSTILE'],
    ['<script>.js', 'APP_PATH_HOSTILE'],
    ['-rf.js', 'APP_PATH_HOSTILE'],
    ['con.js', 'APP_PATH_HOSTILE'],
    ['src//a.js', 'APP_PATH_INVALID'],
    ['src/./a.js', 'APP_PATH_INVALID'],
    ['', 'APP_PATH_EMPTY'],
    ['server.php', 'APP_FILE_TYPE_NOT_ALLOWED'],
    ['.htaccess', 'APP_FILE_TYPE_NOT_ALLOWED'],
    ['Makefile', 'APP_FILE_TYPE_NOT_ALLOWED'],
    [`${'a/'.repeat(20)}x.js`, 'APP_PATH_TOO_DEEP'],
    [`${'a'.repeat(300)}.js`, 'APP_PATH_TOO_LONG'],
  ];
  for (const [path, code] of refused) {
    it(`refuses ${JSON.stringify(path)} with ${code}, naming the path`, () => {
      try {
        normaliseAppPath(path);
        expect.fail('accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(DomainError);
        expect((err as DomainError).code).to.equal(code);
        expect(((err as DomainError).details as { path: string }).path).to.be.a('string');
      }
    });
  }
});

describe('apps decider', () => {
  it('creates an app in the caller\'s tenant; a second create of the same id is a conflict', () => {
    spec.given([]).when({ ...base, type: 'CreateApp', name: 'Quote', description: '', contract: EMPTY_CONTRACT }).then([created]);
    spec.given([created]).when({ ...base, type: 'CreateApp', name: 'Quote', description: '', contract: EMPTY_CONTRACT }).thenThrows('APP_EXISTS', 'conflict');
    spec.given([]).when({ ...base, type: 'CreateApp', name: '  ', description: '', contract: EMPTY_CONTRACT }).thenThrows('APP_NAME_REQUIRED', 'invalid');
  });

  it('another tenant, a deleted app and an unknown one are all APP_NOT_FOUND', () => {
    const stranger = { userId: 'u2', orgId: null, workspaceId: null };
    spec.given([created]).when({ ...change([file('a.js', '1')]), tenant: stranger }).thenThrows('APP_NOT_FOUND', 'not_found');
    spec.given([]).when(change([file('a.js', '1')])).thenThrows('APP_NOT_FOUND', 'not_found');
    const deleted = after([created], { ...base, type: 'DeleteApp' });
    spec.given(deleted).when(change([file('a.js', '1')])).thenThrows('APP_NOT_FOUND', 'not_found');
  });

  it('writes and deletes files in one event with hash and decoded size; unchanged files are left out; nothing to change is no event', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]).toString('base64');
    const events = spec.given([created]).when(change([file('./index.html', '<h1>hi</h1>'), file('img/logo.png', png, 'base64')])).events();
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.equal({
      type: 'AppFilesChanged',
      data: {
        appId: 'a1', source: 'api', deleted: [], by: 'u1', at,
        put: [
          { path: 'index.html', encoding: 'utf8', sha256: sha('<h1>hi</h1>'), size: 11, content: '<h1>hi</h1>' },
          { path: 'img/logo.png', encoding: 'base64', sha256: sha(png, 'base64'), size: 8, content: png },
        ],
      },
    });
    const history = [created, ...events];
    spec.given(history).when(change([file('index.html', '<h1>hi</h1>')])).then([]);
    const next = spec.given(history).when(change([file('index.html', '<h1>hi</h1>'), file('app.js', 'x')], ['img/logo.png'])).events();
    expect(next[0].data).to.deep.include({ deleted: ['img/logo.png'] });
    expect((next[0].data as { put: Array<{ path: string }> }).put.map((f) => f.path)).to.deep.equal(['app.js']);
  });

  it('refuses the whole change when any part breaks a rule, naming the path', () => {
    const ok = file('ok.js', '1');
    const cases: Array<[AppCommand, string, string]> = [
      [change([ok, file('../x.js', '1')]), 'APP_PATH_TRAVERSAL', '../x.js'],
      [change([ok, file('a.png', 'abc')]), 'APP_FILE_ENCODING', 'a.png'],
      [change([ok, file('a.png', '%%%=', 'base64')]), 'APP_FILE_BASE64_INVALID', 'a.png'],
      [change([ok, file('a.js', 'x\uD800y')]), 'APP_FILE_CONTENT_INVALID', 'a.js'],
      [change([ok, file('./ok.js', '2')]), 'APP_PATH_DUPLICATE', './ok.js'],
      [change([ok], ['missing.js']), 'APP_FILE_NOT_FOUND', 'missing.js'],
      [change([ok, file('big.txt', 'x'.repeat(MAX_APP_FILE_BYTES + 1))]), 'APP_FILE_TOO_LARGE', 'big.txt'],
      [change([file('a.txt', 'x'.repeat(400_000)), file('b.txt', 'y'.repeat(400_000))]), 'APP_WRITE_TOO_LARGE', 'b.txt'],
      [change(Array.from({ length: MAX_APP_FILES + 1 }, (_, i) => file(`f${i}.js`, ''))), 'APP_TOO_MANY_FILES', 'f0.js'],
    ];
    for (const [command, code, path] of cases) {
      const err = spec.given([created]).when(command).thenThrows(code);
      expect((err.details as { path: string }).path, code).to.equal(path);
    }
  });

  it('refuses a change that would take the app over 10 MiB in all', () => {
    // 21 files of 500 KB, written 1 per change (each within the write limit), then one more.
    let history: AppEvent[] = [created];
    const chunk = 'z'.repeat(500_000);
    let i = 0;
    while ((i + 1) * 500_000 <= MAX_APP_TOTAL_BYTES) history = after(history, change([file(`part${i++}.txt`, chunk)]));
    const err = spec.given(history).when(change([file('last.txt', chunk)])).thenThrows('APP_TOO_LARGE', 'too_large');
    expect((err.details as { path: string }).path).to.equal('last.txt');
    expect(spec.stateOf(history).totalBytes).to.equal(i * 500_000);
  });

  it('a version records the manifest, contract and flow; restore brings back exactly its files, byte for byte, and restoring again changes nothing', () => {
    const png = Buffer.from(Array.from({ length: 256 }, (_, b) => b)).toString('base64');
    let history = after([created], change([file('index.html', 'v1'), file('logo.png', png, 'base64')]));
    history = after(history, { ...base, type: 'LinkAppFlow', flowId: 'f1' });
    history = after(history, { ...base, type: 'CreateAppVersion', versionId: 'v1', label: 'first', flowVersion: 4 });
    const snapshotBefore = appVersionSnapshot(spec.stateOf(history), 'v1')!;
    history = after(history, change([file('index.html', 'v2'), file('extra.js', 'later')], ['logo.png']));
    history = after(history, { ...base, type: 'UnlinkAppFlow' });
    history = after(history, { ...base, type: 'ChangeAppContract', contract: { input: { type: 'object', properties: { q: { type: 'string' } } }, output: { type: 'object' } } });
    const restore: AppCommand = { ...base, type: 'RestoreAppVersion', versionId: 'v1' };
    const restored = spec.given(history).when(restore).events();
    expect(restored[0].type).to.equal('AppVersionRestored');
    history = [...history, ...restored];
    const state = spec.stateOf(history);
    expect(Object.keys(state.files)).to.deep.equal(['index.html', 'logo.png']);
    expect(state.files['logo.png'].content).to.equal(png);
    expect(state.files['index.html'].content).to.equal('v1');
    expect(state.flowId).to.equal('f1');
    expect(state.contract).to.deep.equal(EMPTY_CONTRACT);
    expect(Object.values(state.files)).to.deep.equal(snapshotBefore.files);
    expect(snapshotBefore).to.deep.include({ number: 1, label: 'first', flowId: 'f1', flowVersion: 4 });
    spec.given(history).when(restore).then([]);
    spec.given(history).when({ ...base, type: 'RestoreAppVersion', versionId: 'nope' }).thenThrows('APP_VERSION_NOT_FOUND', 'not_found');
    expect(spec.stateOf(history).versions[0].createdAt, 'a version keeps its date').to.equal(at);
  });

  it('unlinking without a linked flow is a conflict', () => {
    spec.given([created]).when({ ...base, type: 'UnlinkAppFlow' }).thenThrows('APP_FLOW_NOT_LINKED', 'conflict');
  });
});

describe('apps contract and scaffold', () => {
  const contract = {
    input: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' }, count: { type: 'integer' } } },
    output: { type: 'object', properties: { answer: { type: 'string' } } },
  };

  it('a flow made from the contract matches it', () => {
    const graph = flowGraphForContract(contract, { input: 'in', output: (k) => `out-${k}` });
    expect(graph.nodes.map((n) => n.id)).to.deep.equal(['in', 'out-answer']);
    expect(contractMismatches(contract, graph.nodes)).to.deep.equal([]);
  });

  it('says where a flow does not match', () => {
    const nodes = [
      { id: 'in', data: { nodeType: 'input', inputSchema: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, count: { type: 'string' } } } } },
      { id: 'o', data: { nodeType: 'output', outputKey: 'summary' } },
    ];
    expect(contractMismatches(contract, nodes).map((m) => [m.side, m.code, m.path])).to.deep.equal([
      ['input', 'INPUT_NOT_DECLARED_BY_FLOW', '/properties/email'],
      ['input', 'INPUT_TYPE_DIFFERS', '/properties/count'],
      ['input', 'INPUT_REQUIRED_BY_FLOW', '/properties/topic'],
      ['output', 'OUTPUT_NOT_PRODUCED', '/properties/answer'],
    ]);
    expect(contractMismatches(contract, []).map((m) => m.code)).to.deep.equal(['NO_INPUT_NODE', 'NO_OUTPUT_NODE']);
  });

  it('the offline scaffold is deterministic: a form from the input schema that calls the flow through app-client.js', () => {
    const a = scaffoldFiles('Quote <demo>', contract);
    expect(a).to.deep.equal(scaffoldFiles('Quote <demo>', contract));
    expect(a.map((f) => f.path)).to.deep.equal(['index.html', 'app.js', 'style.css']);
    const html = a[0].content;
    expect(html).to.include('<title>Quote &lt;demo&gt;</title>');
    expect(html).to.include('<input type="email" id="field-email" name="email" required>');
    expect(html).to.include('<input type="number" step="1" id="field-count" name="count">');
    expect(html.indexOf('src="app-client.js"')).to.be.lessThan(html.indexOf('src="app.js"'));
    expect(a[1].content).to.include('window.AppClient.call(window.AppClient.readForm(form))');
    for (const f of a) expect(normaliseAppPath(f.path)).to.equal(f.path);
  });
});
