import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowctl, newConfigHome, spawnFlowctl, type FlowctlEnv } from './support.js';

/** `flowctl workflows …` as real child processes against a real service (embedded). */
describe('flowctl workflows', function () {
  this.timeout(90_000);
  let svc: TestService;
  let alice: RegisteredUser;
  let env: FlowctlEnv;
  let flowId: string;
  const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, alice.auth);
  const jsonLines = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>);
  const history = async (id: string) => {
    const res = await api('GET', `/workflows/${id}/history?limit=1000`);
    expect(res.status, res.text).to.equal(200);
    return res.body.events as Array<{ eventId: number; type: string; data: any }>;
  };
  const waitingOnSignal = (id: string) =>
    waitUntil(`workflow ${id} waits on a signal`, async () => {
      const wf = (await api('GET', `/workflows/${id}`)).body.workflow;
      return wf?.waitingOn?.kind === 'signal' ? wf : null;
    });

  before(async () => {
    svc = await startTestService('embedded', { DEVICE_POLL_INTERVAL_SECONDS: '1', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    alice = await registerUser(svc.baseUrl);
    env = { url: svc.baseUrl, configHome: newConfigHome() };

    // Device login, approved through the API, as a person would.
    const login = spawnFlowctl(['login', '--name', 'workflows test'], env);
    const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
    const approve = await api('POST', '/cli/device/approve', { user_code: userCode });
    expect(approve.status, approve.text).to.equal(200);
    const done = await login.exited;
    expect(done.code, done.stderr).to.equal(0);

    // set_state → wait_signal "approve" → transform.
    const created = await api('POST', '/flows', { name: `cli workflow ${Date.now()}` });
    expect(created.status, created.text).to.equal(201);
    flowId = created.body.flow.id;
    const nodes = [
      { id: 'remember', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'set_state', label: 'Remember', values: { stage: 'waiting', customer: '{{inputs.customer}}' } } },
      { id: 'approval', type: 'custom', position: { x: 200, y: 0 }, data: { nodeType: 'wait_signal', signalName: 'approve' } },
      { id: 'reply', type: 'custom', position: { x: 400, y: 0 }, data: { nodeType: 'transform', template: 'approved for {{inputs.customer}}' } },
    ];
    const edges = [
      { id: 'e1', source: 'remember', target: 'approval' },
      { id: 'e2', source: 'approval', target: 'reply' },
    ];
    const put = await api('PUT', `/flows/${flowId}`, { name: created.body.flow.name, nodes, edges });
    expect(put.status, put.text).to.equal(200);
  });
  after(async () => {
    await svc?.stop();
    rmSync(env.configHome, { recursive: true, force: true });
  });

  it('start --watch prints the events as they come; a signal from another flowctl completes it and the watcher exits 0', async () => {
    const id = `wf-cli-${Date.now()}`;
    const watcher = spawnFlowctl(['workflows', 'start', flowId, '--id', id, '--input', 'customer=ACME', '--attr', 'tier=gold', '--attr', 'amount=42', '--watch'], env);
    await watcher.waitFor(/state set by "Remember" remember \(set_state\)/);
    const waiting = await waitingOnSignal(id);
    expect(waiting).to.deep.include({ status: 'RUNNING', searchAttributes: { tier: 'gold', amount: 42 }, input: { customer: 'ACME' } });
    expect(watcher.child.exitCode, 'the watcher waits while the workflow waits').to.equal(null);

    // Queries and get while it waits, checked against the API.
    const query = await flowctl(['workflows', 'query', id, 'customer', '--json'], env);
    expect(query.code, query.stderr).to.equal(0);
    expect(JSON.parse(query.stdout)).to.deep.include({ workflowId: id, name: 'customer', result: 'ACME', status: 'RUNNING' });
    const humanQuery = await flowctl(['workflows', 'query', id, 'state'], env);
    expect(JSON.parse(humanQuery.stdout)).to.deep.equal({ stage: 'waiting', customer: 'ACME' });
    const missingKey = await flowctl(['workflows', 'query', id, 'nothing'], env);
    expect(missingKey.code).to.equal(4);
    expect(missingKey.stderr).to.include('404 QUERY_NOT_FOUND');
    const get = await flowctl(['workflows', 'get', id, '--json'], env);
    expect(get.code, get.stderr).to.equal(0);
    const fromApi = (await api('GET', `/workflows/${id}`)).body.workflow;
    expect(JSON.parse(get.stdout).workflow).to.deep.equal(fromApi);
    const humanGet = await flowctl(['workflows', 'get', id], env);
    expect(humanGet.stdout).to.match(new RegExp(`^Workflow ${id}  RUNNING  \\(flow ${flowId} v\\d+, execution 1\\)`));
    expect(humanGet.stdout).to.include('waiting on signal approve (node approval)').and.include('node approval  wait_signal  running');

    const signal = await flowctl(['workflows', 'signal', id, 'approve', '--payload', '{"by":"boss"}'], env);
    expect(signal.code, signal.stderr).to.equal(0);
    expect(signal.stdout).to.include(`Signal approve sent to ${id}`);

    const done = await watcher.exited;
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stderr).to.include(`Workflow ${id} of flow ${flowId}`);
    const lines = done.stdout.trim().split('\n');
    const events = await history(id);
    expect(events.at(-1)!.type).to.equal('WorkflowCompleted');
    // One line per event of the log, in order, then the outcome.
    expect(lines.slice(0, -2).map((l) => Number(/#(\d+)/.exec(l)?.[1]))).to.deep.equal(events.map((e) => e.eventId));
    expect(lines[0]).to.match(/#0\s+workflow created \(flow \S+ v\d+, execution 1, 3 nodes\)/);
    expect(done.stdout).to.include('signal approve received: {"by":"boss"}').and.include('node reply (transform) completed');
    expect(lines.at(-3)).to.match(/workflow completed: approved for ACME$/);
    expect(lines.slice(-2)).to.deep.equal([`Workflow ${id} COMPLETED.`, 'result: approved for ACME']);

    // history (and --json) reads the same log; --follow on a closed workflow ends at once with its status.
    const hist = await flowctl(['workflows', 'history', id, '--json'], env);
    expect(hist.code, hist.stderr).to.equal(0);
    expect(jsonLines(hist.stdout)).to.deep.equal(events);
    const follow = await flowctl(['workflows', 'history', id, '--follow', '--after', String(events.at(-2)!.eventId)], env);
    expect(follow.code, follow.stderr).to.equal(0);
    expect(follow.stdout.trim().split('\n')).to.have.length(1);

    // A closed workflow refuses signals (409 → exit 1).
    const late = await flowctl(['workflows', 'signal', id, 'approve'], env);
    expect(late.code).to.equal(1);
    expect(late.stderr).to.include('409 WORKFLOW_CLOSED');
  });

  it('list: --status, --flow and --query agree with the API; --json; a bad filter exits 2 with INVALID_QUERY', async () => {
    const open = JSON.parse((await flowctl(['workflows', 'start', flowId, '--input', 'customer=Initech', '--attr', 'tier=silver', '--json'], env)).stdout).workflow;
    expect(open).to.include({ flowId, status: 'RUNNING' });
    expect(open.id).to.match(/^wf_/);

    const all = await flowctl(['workflows', 'list', '--json'], env);
    expect(all.code, all.stderr).to.equal(0);
    const apiAll = (await api('GET', '/workflows?limit=100')).body.items;
    expect(JSON.parse(all.stdout).items).to.deep.equal(apiAll);
    expect(apiAll.map((w: { id: string }) => w.id)).to.include(open.id);

    const running = JSON.parse((await flowctl(['workflows', 'list', '--status', 'running', '--flow', flowId, '--json'], env)).stdout).items;
    expect(running).to.deep.equal((await api('GET', `/workflows?status=RUNNING&flowId=${flowId}`)).body.items);
    expect(running.map((w: { id: string }) => w.id)).to.deep.equal([open.id]);

    const filter = `ExecutionStatus = 'RUNNING' AND tier = "silver"`;
    const searched = await flowctl(['workflows', 'list', '--query', filter, '--json'], env);
    expect(searched.code, searched.stderr).to.equal(0);
    const apiSearched = (await api('GET', `/workflows/search?query=${encodeURIComponent(filter)}`)).body.items;
    expect(JSON.parse(searched.stdout).items).to.deep.equal(apiSearched);
    expect(apiSearched.map((w: { id: string }) => w.id)).to.deep.equal([open.id]);

    const human = await flowctl(['workflows', 'list', '--query', filter], env);
    const rows = human.stdout.trim().split('\n');
    expect(rows[0]).to.match(/^ID\s+STATUS\s+FLOW\s+STARTED\s+CLOSED$/);
    expect(rows.slice(1)).to.have.length(1);
    expect(rows[1]).to.match(new RegExp(`^${open.id}\\s+RUNNING\\s+${flowId}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+-$`));

    const bad = await flowctl(['workflows', 'list', '--query', "ExecutionStatus = = 'x'"], env);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include("found '=' at position 18 (400 INVALID_QUERY)");
    const badJson = await flowctl(['workflows', 'list', '--query', "ExecutionStatus = = 'x'", '--json'], env);
    expect(badJson.code).to.equal(2);
    const error = JSON.parse(badJson.stderr.trim()).error;
    expect(error).to.include({ code: 'INVALID_QUERY', status: 400, exitCode: 2 });
    expect(error.details.position).to.equal(18);
    expect(bad.stderr).to.include(`  ExecutionStatus = = 'x'\n  ${' '.repeat(18)}^`);

    const mixed = await flowctl(['workflows', 'list', '--query', filter, '--status', 'RUNNING'], env);
    expect(mixed.code).to.equal(2);
    await api('POST', `/workflows/${open.id}/cancel`, { terminate: true });
  });

  it('pause, resume, cancel from other processes: the watcher of a canceled workflow exits 5; errors have their exit codes', async () => {
    const id = `wf-cancel-${Date.now()}`;
    const watcher = spawnFlowctl(['workflows', 'start', flowId, '--id', id, '--input', 'customer=Umbrella', '--watch', '--json'], env);
    await watcher.waitFor(/"type":"WorkflowStateSet"/);
    await waitingOnSignal(id);

    const paused = await flowctl(['workflows', 'pause', id, '--reason', 'lunch', '--json'], env);
    expect(paused.code, paused.stderr).to.equal(0);
    expect(JSON.parse(paused.stdout).workflow.status).to.equal('PAUSED');
    const pausedAgain = await flowctl(['workflows', 'pause', id], env);
    expect(pausedAgain.code).to.equal(1);
    expect(pausedAgain.stderr).to.include('409 WORKFLOW_NOT_RUNNING');
    const resumed = await flowctl(['workflows', 'resume', id], env);
    expect(resumed.code, resumed.stderr).to.equal(0);
    expect(resumed.stdout.trim()).to.equal(`Workflow ${id} RUNNING.`);

    const cancel = await flowctl(['workflows', 'cancel', id, '--reason', 'no longer needed'], env);
    expect(cancel.code, cancel.stderr).to.equal(0);
    const done = await watcher.exited;
    expect(done.code, done.stderr).to.equal(5);
    expect(done.stderr, '--json: no notes on stderr').to.equal('');
    const events = jsonLines(done.stdout);
    expect(events.map((e) => e.type)).to.include.members(['WorkflowPaused', 'WorkflowResumed', 'WorkflowCanceled']);
    expect(events.map((e) => e.eventId)).to.deep.equal((await history(id)).map((e) => e.eventId));
    expect((await api('GET', `/workflows/${id}`)).body.workflow.status).to.equal('CANCELED');
    const follow = await flowctl(['workflows', 'history', id, '--follow'], env);
    expect(follow.code).to.equal(5);
    expect(follow.stdout).to.include('workflow canceled: no longer needed');

    // Terminate ends at once.
    const other = JSON.parse((await flowctl(['workflows', 'start', flowId, '--json'], env)).stdout).workflow;
    const terminated = await flowctl(['workflows', 'cancel', other.id, '--terminate', '--json'], env);
    expect(terminated.code, terminated.stderr).to.equal(0);
    expect(JSON.parse(terminated.stdout).workflow.status).to.equal('TERMINATED');

    const missing = await flowctl(['workflows', 'get', 'no-such-workflow'], env);
    expect(missing.code).to.equal(4);
    expect(missing.stderr).to.include('404 WORKFLOW_NOT_FOUND');
    const badPayload = await flowctl(['workflows', 'signal', id, 'x', '--payload', 'not json'], env);
    expect(badPayload.code).to.equal(2);
    const badInput = await flowctl(['workflows', 'start', flowId, '--input', 'nokey'], env);
    expect(badInput.code).to.equal(2);
    const noFlow = await flowctl(['workflows', 'start', 'no-such-flow'], env);
    expect(noFlow.code).to.equal(4);
  });
});
