import { expect } from 'chai';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowctl, newConfigHome, spawnFlowctl, TcpProxy, type FlowctlEnv } from './support.js';

/** flowctl as a real child process against a real service (embedded: the CLI is a pure HTTP client). */
describe('flowctl against a running service', function () {
  this.timeout(90_000);
  let svc: TestService;
  let alice: RegisteredUser;
  let env: FlowctlEnv;
  const configHomes: string[] = [];
  /** Device-token polls the service has answered, from its request log: [status, …]. */
  const tokenPolls: number[] = [];
  const requestLog = {
    write(line: string) {
      if (!line.includes('/cli/device/token')) return;
      const entry = JSON.parse(line) as { msg?: string; path?: string; status?: number };
      if (entry.msg === 'request' && entry.path?.endsWith('/cli/device/token') && entry.status) tokenPolls.push(entry.status);
    },
  };
  const api = (method: string, path: string, body?: unknown, who: RegisteredUser = alice) => call(svc.baseUrl, method, path, body, who.auth);

  /** A flow: transform → (cats? llm offline) and → transform, built through the API. */
  async function sampleFlow(name: string) {
    const created = await api('POST', '/flows', { name, description: 'made by the flowctl test' });
    expect(created.status, created.text).to.equal(201);
    const flowId = created.body.flow.id as string;
    const nodes = [
      { id: 'topic', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', label: 'Topic', template: 'topic {{inputs.topic}} x{{inputs.n}}' } },
      { id: 'shout', type: 'custom', position: { x: 200, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'say {{previous}}' } },
      { id: 'done', type: 'custom', position: { x: 400, y: 0 }, data: { nodeType: 'transform', template: 'done: {{previous}}' } },
    ];
    const edges = [
      { id: 'e1', source: 'topic', target: 'shout' },
      { id: 'e2', source: 'shout', target: 'done', label: 'then' },
    ];
    const put = await api('PUT', `/flows/${flowId}`, { name, description: 'made by the flowctl test', nodes, edges });
    expect(put.status, put.text).to.equal(200);
    return flowId;
  }

  before(async () => {
    svc = await startTestService('embedded', { DEVICE_POLL_INTERVAL_SECONDS: '1', RATE_LIMIT_AUTH_PER_MINUTE: '1000', LOG_LEVEL: 'info' }, { logSink: requestLog });
    alice = await registerUser(svc.baseUrl);
    const home = newConfigHome();
    configHomes.push(home);
    env = { url: svc.baseUrl, configHome: home };
  });
  after(async () => {
    await svc?.stop();
    for (const home of configHomes) rmSync(home, { recursive: true, force: true });
  });

  it('login: the device flow, approved through the API; the token is saved 0600 and whoami answers', async () => {
    const polled = tokenPolls.length;
    const login = spawnFlowctl(['login', '--name', 'test laptop'], env);
    const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
    expect(login.stdout()).to.match(/To sign in, open http:\/\/\S+\/cli\/device/);
    expect(login.stdout()).to.include(`?user_code=${userCode}`);
    // The CLI is polling (interval 1 s): let it see authorization_pending (400) at least once.
    await waitUntil('a device-token poll answered authorization_pending', () => tokenPolls.slice(polled).includes(400), 10_000, 25);
    const approve = await api('POST', '/cli/device/approve', { user_code: userCode });
    expect(approve.status, approve.text).to.equal(200);
    expect(approve.body.clientName).to.equal('test laptop');
    const done = await login.exited;
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stdout).to.include(`as ${alice.email}`);

    const file = join(env.configHome, 'flowctl', 'credentials.json');
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(statSync(join(env.configHome, 'flowctl')).mode & 0o777).to.equal(0o700);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.current).to.equal(svc.baseUrl);
    expect(saved.servers[svc.baseUrl].token).to.match(/^fcli_/);
    expect(saved.servers[svc.baseUrl].userId).to.equal(alice.user.id);

    const who = await flowctl(['whoami', '--json'], env);
    expect(who.code, who.stderr).to.equal(0);
    const body = JSON.parse(who.stdout);
    expect(body).to.include({ userId: alice.user.id, email: alice.email, credential: 'cli_token', tokenName: 'test laptop', url: svc.baseUrl });
    const human = await flowctl(['whoami'], env);
    expect(human.code).to.equal(0);
    expect(human.stdout).to.include(alice.email).and.include(`user:       ${alice.user.id}`).and.include('cli_token');
  });

  it('login --json prints the device code as a JSON line; a denied login exits 3', async () => {
    const home = newConfigHome();
    configHomes.push(home);
    const login = spawnFlowctl(['login', '--json'], { url: svc.baseUrl, configHome: home });
    const [line] = await login.waitFor(/^\{.*\}$/m);
    const code = JSON.parse(line);
    expect(code).to.include({ event: 'device_code', interval: 1 });
    expect(code.verification_uri).to.match(/\/cli\/device$/);
    const deny = await api('POST', '/cli/device/deny', { user_code: code.user_code });
    expect(deny.status, deny.text).to.equal(200);
    const done = await login.exited;
    expect(done.code).to.equal(3);
    expect(JSON.parse(done.stderr.trim()).error).to.include({ code: 'access_denied', exitCode: 3 });
    expect(existsSync(join(home, 'flowctl', 'credentials.json'))).to.equal(false);
  });

  it('login polls no faster than the announced interval and backs off by 5 s on slow_down', async () => {
    const home = newConfigHome();
    configHomes.push(home);
    const proxy = await new TcpProxy(Number(new URL(svc.baseUrl).port)).start();
    const timeline: Array<{ at: number; what: 'poll' | 'slow_down' }> = [];
    let deviceCode: string | null = null;
    proxy.sniff = (direction, data) => {
      if (direction === 'up' && data.includes('/cli/device/token')) timeline.push({ at: Date.now(), what: 'poll' });
      if (direction === 'up') deviceCode ??= /"device_code":"([^"]+)"/.exec(data)?.[1] ?? null;
      if (direction === 'down' && data.includes('"slow_down"')) timeline.push({ at: Date.now(), what: 'slow_down' });
    };
    try {
      const login = spawnFlowctl(['login'], { url: proxy.url, configHome: home });
      const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
      // Another client polls with the same device code right after flowctl: one of the two polls is too early.
      const code = await waitUntil("flowctl's device code on the wire", () => deviceCode, 10_000, 20);
      await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: code });
      await waitUntil('a slow_down answer on the wire', () => timeline.some((t) => t.what === 'slow_down'), 20_000);
      const slowDownAt = timeline.find((t) => t.what === 'slow_down')!.at;
      // Approved now: flowctl's next poll (not before its slower interval) receives the token.
      expect((await api('POST', '/cli/device/approve', { user_code: userCode })).status).to.equal(200);
      const done = await login.exited;
      expect(done.code, done.stderr).to.equal(0);
      expect(timeline.filter((t) => t.what === 'slow_down')).to.have.length(1);
      const polls = timeline.filter((t) => t.what === 'poll').map((t) => t.at);
      // The poll answered slow_down is the last one before that answer: the next waits 1 + 5 s, the others 1 s.
      const slowed = polls.filter((at) => at <= slowDownAt).length - 1;
      for (let i = 1; i < polls.length; i++) expect(polls[i] - polls[i - 1], `gap before poll ${i}`).to.be.at.least(i === slowed + 1 ? 5_900 : 950);
      expect(polls.length).to.be.at.least(slowed + 2);
    } finally {
      await proxy.stop();
    }
  });

  it('flows list, get, export and import (JSON files); errors have their exit codes', async () => {
    const flowId = await sampleFlow(`cli flow ${Date.now()}`);
    const list = await flowctl(['flows', 'list', '--json'], env);
    expect(list.code, list.stderr).to.equal(0);
    const listed = JSON.parse(list.stdout).items.find((f: { id: string }) => f.id === flowId);
    expect(listed).to.include({ nodeCount: 3, edgeCount: 2 });
    const human = await flowctl(['flows', 'list'], env);
    expect(human.stdout.split('\n')[0]).to.match(/^ID\s+NAME\s+NODES\s+VERSION\s+UPDATED$/);
    expect(human.stdout).to.include(flowId).and.include(listed.name);

    const get = await flowctl(['flows', 'get', flowId], env);
    expect(get.code).to.equal(0);
    expect(get.stdout).to.include('3 nodes, 2 connections').and.include('edge shout → done  (then)').and.include('node topic  transform  "Topic"');

    const file = join(env.configHome, 'flow.json');
    const exported = await flowctl(['flows', 'export', flowId, '-o', file], env);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.include(`to ${file}`);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc).to.include({ format: 'flowctl.flow', version: 1 });
    expect(doc.flow.nodes.map((n: { id: string }) => n.id)).to.deep.equal(['topic', 'shout', 'done']);

    const imported = await flowctl(['flows', 'import', file, '--name', 'the copy', '--json'], env);
    expect(imported.code, imported.stderr).to.equal(0);
    const copy = JSON.parse(imported.stdout);
    expect(copy).to.include({ name: 'the copy', nodes: 3, edges: 2 });
    expect(copy.flowId).to.not.equal(flowId);
    const original = (await api('GET', `/flows/${flowId}`)).body.flow;
    const copied = (await api('GET', `/flows/${copy.flowId}`)).body.flow;
    expect(copied.name).to.equal('the copy');
    expect(copied.description).to.equal(original.description);
    const shape = (f: any) => ({ nodes: f.nodes.map((n: any) => ({ id: n.id, type: n.type, position: n.position, data: n.data })), edges: f.edges.map((e: any) => ({ id: e.id, source: e.source, target: e.target, label: e.label ?? null })) });
    expect(shape(copied)).to.deep.equal(shape(original));

    // Import from stdin of a `flows get --json` answer works too; a file that is not a flow is a usage error.
    const notAFlow = join(env.configHome, 'nope.json');
    writeFileSync(notAFlow, '{"hello": 1}');
    const bad = await flowctl(['flows', 'import', notAFlow], env);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('is not a flow');
    const cycle = join(env.configHome, 'cycle.json');
    writeFileSync(cycle, JSON.stringify({ ...doc, flow: { ...doc.flow, edges: [...doc.flow.edges, { id: 'e3', source: 'done', target: 'topic' }] } }));
    const refused = await flowctl(['flows', 'import', cycle, '--name', 'cyclic'], env);
    expect(refused.code, refused.stderr).to.equal(2);
    expect(refused.stderr).to.include('refused the flow');
    const after = JSON.parse((await flowctl(['flows', 'list', '--json'], env)).stdout).items;
    expect(after.map((f: { name: string }) => f.name), 'the refused import left no empty flow').to.not.include('cyclic');

    const missing = await flowctl(['flows', 'get', 'no-such-flow'], env);
    expect(missing.code).to.equal(4);
    expect(missing.stderr).to.include('404 FLOW_NOT_FOUND');
    const usage = await flowctl(['flows', 'list', '--limit', 'zero'], env);
    expect(usage.code).to.equal(2);
  });

  it('run: live per-node progress on stderr, the result on stdout; --json for scripts; a failed run exits 5', async () => {
    const flowId = await sampleFlow(`run flow ${Date.now()}`);
    const human = await flowctl(['run', flowId, '--input', 'topic=cats', '--input', 'n=3'], env);
    expect(human.code, human.stderr).to.equal(0);
    for (const node of ['"Topic" topic (transform) completed', 'shout (llm) completed', 'done (transform) completed']) expect(human.stderr).to.include(node);
    expect(human.stderr).to.match(/topic \(transform\) completed in \d+ ms: topic cats x3/);
    expect(human.stdout).to.match(/^Run \S+ completed in \d+ ms\.\noutputs:/);
    expect(human.stdout).to.include('done: say topic cats x3');

    const json = await flowctl(['run', flowId, '--input', 'topic=dogs', '--input', 'n=1', '--json'], env);
    expect(json.code, json.stderr).to.equal(0);
    expect(json.stderr).to.equal('');
    const result = JSON.parse(json.stdout);
    expect(result).to.include({ flowId, status: 'completed' });
    expect(result.nodes.map((n: { nodeId: string; status: string }) => [n.nodeId, n.status])).to.deep.equal([['topic', 'completed'], ['shout', 'completed'], ['done', 'completed']]);
    expect(JSON.stringify(result.outputs)).to.include('done: say topic dogs x1');
    const proc = await api('GET', `/processes/${result.processId}`);
    expect(proc.body.process.status).to.equal('completed');
    expect(proc.body.process.nodes.find((n: { nodeId: string }) => n.nodeId === 'topic').output).to.equal('topic dogs x1');

    // An OpenAI node without a key fails: exit 5, the node's failure shown.
    const broken = (await api('POST', '/flows', { name: `broken ${Date.now()}` })).body.flow.id;
    await api('PUT', `/flows/${broken}`, { name: 'broken', nodes: [{ id: 'ask', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: 'hi' } }], edges: [] });
    const failed = await flowctl(['run', broken], env);
    expect(failed.code, failed.stderr).to.equal(5);
    expect(failed.stderr).to.match(/ask \(llm\) failed/);
    expect(failed.stdout).to.match(/^Run \S+ failed/);

    const usage = await flowctl(['run', flowId, '--input', 'no-equals-sign'], env);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.include('--input expects key=value');
  });

  it('run --async prints the process id; runs tail follows its events to the end', async () => {
    const flowId = await sampleFlow(`tail flow ${Date.now()}`);
    const queued = await flowctl(['run', flowId, '--async', '--input', 'topic=owls', '--json'], env);
    expect(queued.code, queued.stderr).to.equal(0);
    const { processId, status } = JSON.parse(queued.stdout);
    expect(status).to.equal('queued');

    const tail = await flowctl(['runs', 'tail', processId], env);
    expect(tail.code, tail.stderr).to.equal(0);
    const lines = tail.stdout.trim().split('\n');
    expect(lines[0]).to.match(/#0\s+run requested for flow \S+ \(3 nodes, source api\)/);
    expect(tail.stdout).to.include('node "Topic" topic (transform) started').and.include('node done (transform) completed');
    expect(lines.at(-1)).to.match(/run completed/);

    const json = await flowctl(['runs', 'tail', processId, '--json'], env);
    const events = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const fromApi = (await api('GET', `/processes/${processId}/events?limit=100`)).body.events;
    expect(events.map((e) => [e.revision, e.type])).to.deep.equal(fromApi.map((e: { revision: number; type: string }) => [e.revision, e.type]));
    const from = await flowctl(['runs', 'tail', processId, '--from', '3', '--json'], env);
    expect(JSON.parse(from.stdout.split('\n')[0]).revision).to.equal(3);

    const unknown = await flowctl(['runs', 'tail', 'nope'], env);
    expect(unknown.code).to.equal(4);
  });

  it('logout revokes the token on the service and forgets it; then commands exit 3', async () => {
    const file = join(env.configHome, 'flowctl', 'credentials.json');
    const token = JSON.parse(readFileSync(file, 'utf8')).servers[svc.baseUrl].token;
    const out = await flowctl(['logout'], env);
    expect(out.code, out.stderr).to.equal(0);
    expect(out.stdout).to.include('token revoked');
    expect(existsSync(file)).to.equal(false);
    const verify = await call(svc.baseUrl, 'GET', '/cli/tokens/verify', undefined, { Authorization: `Bearer ${token}` });
    expect(verify.status).to.equal(401);
    const who = await flowctl(['whoami'], env);
    expect(who.code).to.equal(3);
    expect(who.stderr).to.include('run flowctl login');
    const revoked = await flowctl(['whoami'], { ...env, extra: { FLOWCTL_TOKEN: token } });
    expect(revoked.code).to.equal(3);
    const unreachable = await flowctl(['whoami'], { ...env, url: 'http://127.0.0.1:9', extra: { FLOWCTL_TOKEN: token } });
    expect(unreachable.code).to.equal(6);
  });
});
