import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowctl, newConfigHome, spawnFlowctl, type FlowctlEnv } from './support.js';

/**
 * A user's day with flowctl alone (issue 36 item 8): build a flow from a file and flags, open its
 * trigger, run it, read its runs and logs, manage an API key, delete the flow. Each step's --json
 * answer is checked, and where it matters, what the service now holds.
 */
for (const mode of availableModes()) describe(`flowctl: a user's day (${mode})`, function () {
  this.timeout(120_000);
  let svc: TestService;
  let alice: RegisteredUser;
  let env: FlowctlEnv;
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = alice.auth) => call(svc.baseUrl, method, path, body, headers);
  /** flowctl … --json that must succeed: its one JSON document. */
  const ok = async (args: string[]) => {
    const r = await flowctl([...args, '--json'], env);
    expect(r.code, `flowctl ${args.join(' ')}\n${r.stderr}`).to.equal(0);
    return JSON.parse(r.stdout);
  };

  before(async () => {
    svc = await startTestService(mode, { DEVICE_POLL_INTERVAL_SECONDS: '1', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    alice = await registerUser(svc.baseUrl);
    env = { url: svc.baseUrl, configHome: newConfigHome() };
    const login = spawnFlowctl(['login', '--name', 'day test'], env);
    const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
    expect((await api('POST', '/cli/device/approve', { user_code: userCode })).status).to.equal(200);
    expect((await login.exited).code).to.equal(0);
  });
  after(async () => {
    await svc?.stop();
    rmSync(env.configHome, { recursive: true, force: true });
  });

  it('builds, triggers, runs, inspects and deletes a flow, and manages an API key', async () => {
    // A flow from a file: one node, no connections yet.
    const file = join(env.configHome, 'flow.json');
    const start = { id: 'start', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', label: 'Start', template: 'hi {{inputs.name}}' } };
    writeFileSync(file, JSON.stringify({ name: 'my day', description: 'from a file', nodes: [start], edges: [] }));
    const created = await ok(['flows', 'create', '--file', file]);
    expect(created).to.include({ name: 'my day', description: 'from a file', nodes: 1, edges: 0 });
    const flowId = created.flowId as string;
    const stored = (await api('GET', `/flows/${flowId}`)).body.flow;
    expect(stored.description).to.equal('from a file');
    expect(stored.nodes.map((n: any) => [n.id, n.data.template])).to.deep.equal([['start', 'hi {{inputs.name}}']]);

    // Two nodes by flags: an llm (its id chosen) to the right of start, a transform (id from the service).
    const shout = await ok(['nodes', 'add', flowId, '--id', 'shout', '--type', 'llm', '--provider', 'offline', '--model', 'any', '--prompt', 'say {{previous}}', '--label', 'Shout']);
    expect(shout.node).to.deep.include({ id: 'shout', type: 'custom', position: { x: 200, y: 0 } });
    expect(shout.node.data).to.include({ nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'say {{previous}}', label: 'Shout' });
    const done = await ok(['nodes', 'add', flowId, '--type', 'transform', '--template', 'done: {{previous}}', '--position', '400,50']);
    const doneId = done.node.id as string;
    expect(done.node.position).to.deep.equal({ x: 400, y: 50 });
    expect(done.node.data).to.include({ nodeType: 'transform', template: 'done: {{previous}}' });
    const listed = await ok(['nodes', 'list', flowId]);
    expect(listed.items.map((n: any) => n.id)).to.deep.equal(['start', 'shout', doneId]);

    // A whole node from a file; --webhook-url on edit keeps the rest of its webhookConfig; removed again before any run.
    const nodeFile = join(env.configHome, 'node.json');
    writeFileSync(nodeFile, JSON.stringify({ type: 'custom', position: { x: 0, y: 300 }, data: { nodeType: 'webhook', webhookConfig: { url: 'http://127.0.0.1:9/a', method: 'PUT' } } }));
    const hook = await ok(['nodes', 'add', flowId, '--file', nodeFile]);
    expect(hook.node).to.deep.include({ position: { x: 0, y: 300 } });
    const moved = await ok(['nodes', 'edit', flowId, hook.node.id, '--webhook-url', 'http://127.0.0.1:9/b']);
    expect(moved.node.data.webhookConfig).to.deep.equal({ url: 'http://127.0.0.1:9/b', method: 'PUT' });
    expect((await ok(['nodes', 'rm', flowId, hook.node.id])).nodeId).to.equal(hook.node.id);

    // Connected: start → shout → done.
    const first = await ok(['connections', 'add', flowId, 'start', 'shout']);
    expect(first.connection).to.include({ source: 'start', target: 'shout' });
    const second = await ok(['connections', 'add', flowId, 'shout', doneId, '--label', 'then']);
    expect(second.connection).to.include({ source: 'shout', target: doneId, label: 'then' });
    const edges = await ok(['connections', 'list', flowId]);
    expect(edges.items.map((e: any) => [e.id, e.source, e.target])).to.deep.equal([
      [first.connection.id, 'start', 'shout'],
      [second.connection.id, 'shout', doneId],
    ]);
    const cycle = await flowctl(['connections', 'add', flowId, doneId, 'start'], env);
    expect(cycle.code, 'a cycle is refused with 400: exit 2').to.equal(2);
    expect(cycle.stderr).to.include('CYCLE');

    // The trigger: off with no key, then enabled with a key that works on the public route.
    expect((await ok(['trigger', 'show', flowId])).trigger).to.include({ enabled: false, hasKey: false });
    const enabled = await ok(['trigger', 'enable', flowId]);
    expect(enabled.trigger).to.include({ enabled: true, hasKey: false });
    expect(enabled.url).to.equal(`${svc.baseUrl}/public/flows/${flowId}/trigger`);
    const { key: firstKey } = await ok(['trigger', 'regenerate-key', flowId]);
    expect(firstKey).to.be.a('string').with.length.greaterThan(16);
    // For people: the key alone on the first line of stdout, the warning on stderr; the first key is dead.
    const regenerated = await flowctl(['trigger', 'regenerate-key', flowId], env);
    expect(regenerated.code, regenerated.stderr).to.equal(0);
    const key = regenerated.stdout.split('\n')[0];
    expect(key).to.have.length(firstKey.length);
    expect(key).to.not.equal(firstKey);
    expect(regenerated.stdout).to.include(`-H 'X-Trigger-Key: ${key}'`);
    expect(regenerated.stderr).to.include('shown only now');
    expect((await api('POST', `/public/flows/${flowId}/trigger`, {}, { 'X-Trigger-Key': firstKey })).status).to.be.oneOf([401, 403]);
    expect((await ok(['trigger', 'show', flowId])).trigger).to.include({ enabled: true, hasKey: true });
    const triggered = await api('POST', `/public/flows/${flowId}/trigger`, { name: 'Bob' }, { 'X-Trigger-Key': key });
    expect(triggered.status, triggered.text).to.equal(200);
    expect(triggered.body.status).to.equal('completed');
    const wrongKey = await api('POST', `/public/flows/${flowId}/trigger`, { name: 'Bob' }, { 'X-Trigger-Key': `${key}x` });
    expect(wrongKey.status).to.be.oneOf([401, 403]);
    const disabled = await ok(['trigger', 'disable', flowId]);
    expect(disabled.trigger).to.include({ enabled: false, hasKey: true });

    // Runs: one completed, then the llm switched to a provider without a key (the data merged), one failed.
    const good = await ok(['run', flowId, '--input', 'name=Ada']);
    expect(good.status).to.equal('completed');
    expect(JSON.stringify(good.outputs)).to.include('done: say hi Ada');
    const edited = await ok(['nodes', 'edit', flowId, 'shout', '--provider', 'openai', '--model', 'gpt-4o']);
    expect(edited.node.data).to.include({ llm: 'openai', model: 'gpt-4o', prompt: 'say {{previous}}', label: 'Shout' });
    const bad = await flowctl(['run', flowId, '--input', 'name=Eve', '--json'], env);
    expect(bad.code, bad.stderr).to.equal(5);
    const badRun = JSON.parse(bad.stdout);
    expect(badRun.status).to.equal('failed');

    // The lists come from the read model: wait until both runs are there.
    const failed = await waitUntil('the failed run is listed', async () => {
      const r = await ok(['runs', 'list', '--flow', flowId, '--status', 'failed']);
      return r.items.length ? r : null;
    });
    expect(failed.items.map((r: any) => r.processId)).to.deep.equal([badRun.processId]);
    const completed = await waitUntil('both completed runs are listed', async () => {
      const r = await ok(['runs', 'list', '--flow', flowId, '--status', 'completed']);
      return r.items.length === 2 ? r : null;
    });
    expect(completed.items.map((r: any) => r.processId)).to.include(good.processId).and.not.include(badRun.processId);
    expect(completed.items.map((r: any) => r.source).sort()).to.deep.equal(['api', 'trigger']);
    const limited = await ok(['runs', 'list', '--flow', flowId, '--limit', '1']);
    expect(limited.items.map((r: any) => r.processId), 'newest first').to.deep.equal([badRun.processId]);
    const human = await flowctl(['runs', 'list', '--flow', flowId], env);
    expect(human.stdout.split('\n')[0]).to.match(/^PROCESS\s+STATUS\s+SOURCE\s+REQUESTED\s+DURATION$/);

    // The completed run's log: its events from the log and every node's whole output.
    const logs = await ok(['runs', 'logs', good.processId]);
    expect(logs.process).to.include({ processId: good.processId, status: 'completed', flowId });
    expect(logs.process.nodes.map((n: any) => [n.nodeId, n.status, n.output])).to.deep.equal([
      ['start', 'completed', 'hi Ada'],
      ['shout', 'completed', 'say hi Ada'],
      [doneId, 'completed', 'done: say hi Ada'],
    ]);
    const fromApi = (await api('GET', `/processes/${good.processId}/events?limit=100`)).body.events;
    expect(logs.events.map((e: any) => e.type)).to.deep.equal(fromApi.map((e: any) => e.type));
    expect(logs.events[0].type).to.equal('RunRequested');
    expect(logs.events.at(-1).type).to.equal('RunCompleted');
    const readable = await flowctl(['runs', 'logs', badRun.processId], env);
    expect(readable.code, readable.stderr).to.equal(0);
    expect(readable.stdout).to.match(/^Run \S+ of flow \S+: failed/);
    expect(readable.stdout).to.include('"Start" start (transform): completed').and.include('"Shout" shout (llm): failed').and.include('\n    hi Eve\n');

    // An API key: created (shown once), usable, listed, revoked, refused.
    const made = await ok(['keys', 'create', '--name', 'ci', '--scopes', 'view_resources']);
    expect(made.key).to.match(/^fsk_/);
    expect(made.apiKey).to.include({ name: 'ci' });
    expect(made.apiKey.scopes).to.deep.equal(['view_resources']);
    const bearer = { Authorization: `Bearer ${made.key}` };
    expect((await api('GET', `/flows/${flowId}`, undefined, bearer)).status).to.equal(200);
    expect((await ok(['keys', 'list'])).items.map((k: any) => k.id)).to.include(made.apiKey.id);
    const keyTable = (await flowctl(['keys', 'list'], env)).stdout;
    expect(keyTable.split('\n')[0]).to.match(/^ID\s+NAME\s+KEY\s+SCOPES\s+CREATED\s+EXPIRES$/);
    expect(keyTable).to.include(`fsk_${made.apiKey.id}.…${made.key.slice(-4)}`).and.not.include(made.key);
    const revoked = await ok(['keys', 'revoke', made.apiKey.id]);
    expect(revoked.apiKey.id).to.equal(made.apiKey.id);
    expect((await api('GET', `/flows/${flowId}`, undefined, bearer)).status).to.equal(401);
    expect((await ok(['keys', 'list'])).items.map((k: any) => k.id)).to.not.include(made.apiKey.id);
    expect((await flowctl(['keys', 'revoke', made.apiKey.id], env)).code, 'revoked twice: 404').to.equal(4);

    // Renamed, a node removed with its connections, then the flow deleted.
    expect(await ok(['flows', 'rename', flowId, 'my evening'])).to.include({ flowId, name: 'my evening' });
    const removed = await ok(['nodes', 'rm', flowId, doneId]);
    expect(removed.removedConnectionIds).to.deep.equal([second.connection.id]);
    expect((await api('GET', `/flows/${flowId}`)).body.flow).to.include({ name: 'my evening' });
    expect(await ok(['flows', 'delete', flowId])).to.deep.equal({ flowId, deleted: true });
    expect((await flowctl(['flows', 'get', flowId], env)).code).to.equal(4);
  });

  it('usage errors exit 2 before anything is sent; with --json the error is JSON', async () => {
    const cases: Array<[string[], string]> = [
      [['runs', 'list', '--status', 'bogus'], '--status must be one of'],
      [['runs', 'list', '--status', 'completed'], 'needs --flow'],
      [['runs', 'list', '--flow', 'f', '--limit', '0'], '--limit must be a positive whole number'],
      // The flow does not exist: had the request been sent, the exit would be 4.
      [['nodes', 'add', 'no-such-flow', '--type', 'transform', '--prompt', 'x'], '--prompt is for llm nodes'],
      [['nodes', 'add', 'no-such-flow', '--type', 'llm', '--data', '{oops'], '--data must be a JSON object'],
      [['nodes', 'add', 'no-such-flow', '--type', 'transform', '--template', 'x', '--position', 'left'], '--position expects x,y'],
      [['nodes', 'add', 'no-such-flow', '--template', 'x'], 'is for transform nodes'],
      [['flows', 'create'], 'needs --name'],
      [['flows', 'create', '--file', join(env.configHome, 'flow.yaml')], 'cannot read'],
      [['keys', 'create'], "required option '--name <name>' not specified"],
      [['keys', 'create', '--name', 'x', '--expires', 'tomorrow'], '--expires must be a date'],
      [['connections', 'add', 'no-such-flow', 'a'], "missing required argument 'target'"],
      [['completion', 'fish'], 'Allowed choices are bash, zsh'],
    ];
    for (const [args, message] of cases) {
      const r = await flowctl(args, env);
      expect(r.code, `flowctl ${args.join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stderr, args.join(' ')).to.include(message);
    }
    writeFileSync(join(env.configHome, 'flow.yaml'), 'name: yaml flow\n');
    const yaml = await flowctl(['flows', 'create', '--file', join(env.configHome, 'flow.yaml')], env);
    expect(yaml.code).to.equal(2);
    expect(yaml.stderr).to.include('YAML is not supported');
    const json = await flowctl(['runs', 'list', '--status', 'bogus', '--json'], env);
    expect(json.code).to.equal(2);
    expect(JSON.parse(json.stderr).error).to.include({ code: 'USAGE', exitCode: 2 });
  });

  it('completion prints bash and zsh scripts made from the command tree, and the bash one completes', async () => {
    const bash = await flowctl(['completion', 'bash'], env);
    expect(bash.code, bash.stderr).to.equal(0);
    for (const path of ['flows create', 'nodes add', 'nodes edit', 'connections rm', 'trigger regenerate-key', 'keys revoke', 'runs logs', 'runs list', 'workflows list']) {
      expect(bash.stdout, path).to.include(`'${path}') words=`);
    }
    const script = join(env.configHome, 'flowctl.bash');
    writeFileSync(script, bash.stdout);
    const complete = (...words: string[]) => {
      const r = spawnSync('bash', ['-c', `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _flowctl; printf '%s\\n' "\${COMPREPLY[@]}"`, script, 'flowctl', ...words], { encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
      return r.stdout.trim().split('\n');
    };
    expect(complete('tri')).to.deep.equal(['trigger']);
    expect(complete('trigger', '')).to.include.members(['show', 'enable', 'disable', 'regenerate-key']);
    expect(complete('--json', 'runs', 'l')).to.deep.equal(['list', 'logs']);
    expect(complete('runs', 'list', '--flow', 'f1', '--st')).to.deep.equal(['--status']);
    expect(complete('nodes', 'add', 'f1', '--pro')).to.deep.equal(['--prompt', '--provider']);
    expect(complete('completion', '')).to.include.members(['bash', 'zsh']);

    const zsh = await flowctl(['completion', 'zsh'], env);
    expect(zsh.code, zsh.stderr).to.equal(0);
    expect(zsh.stdout).to.match(/^#compdef flowctl\n/);
    expect(zsh.stdout).to.include("'keys create') words=(").and.include("'--scopes'").and.include('compdef _flowctl flowctl');
  });
});
