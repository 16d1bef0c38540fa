import { expect } from 'chai';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { flowctl, newConfigHome, spawnFlowctl, type FlowctlEnv } from './support.js';

/**
 * Issue 33 item 4: `flowctl eval run <datasetId> --flow <id> --against <version>` prints the
 * per-case table and the per-version summary, and exits 1 when the pass rate is under --min.
 */
for (const mode of availableModes()) describe(`flowctl eval run (${mode})`, function () {
  this.timeout(120_000);
  let svc: TestService;
  let alice: RegisteredUser;
  let env: FlowctlEnv;
  const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, alice.auth);

  before(async () => {
    svc = await startTestService(mode, { DEVICE_POLL_INTERVAL_SECONDS: '1', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    alice = await registerUser(svc.baseUrl);
    env = { url: svc.baseUrl, configHome: newConfigHome() };
    const login = spawnFlowctl(['login', '--name', 'evals test'], env);
    const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
    expect((await api('POST', '/cli/device/approve', { user_code: userCode })).status).to.equal(200);
    expect((await login.exited).code).to.equal(0);
  });
  after(async () => {
    await svc?.stop();
    rmSync(env.configHome, { recursive: true, force: true });
  });

  it('prints the table of two versions side by side; exit 1 under --min, 0 at or above it', async () => {
    const flowId = (await api('POST', '/flows', { name: 'eval me' })).body.flow.id as string;
    const node = (await api('POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'hi {{inputs.who}}' } })).body.node;
    const old = (await api('GET', `/flows/${flowId}`)).body.flow.version as number;
    expect((await api('PUT', `/flows/${flowId}/nodes/${node.id}`, { data: { ...node.data, prompt: 'hello {{inputs.who}}' } })).status).to.equal(200);
    const current = (await api('GET', `/flows/${flowId}`)).body.flow.version as number;
    // Two cases expect the new answer, two the old one: each version passes half.
    const cases = ['ann', 'bob'].flatMap((who) => [{ input: { who }, expected: `hello ${who}` }, { input: { who }, expected: `hi ${who}` }]);
    const dataset = await api('POST', '/evals/datasets', { name: 'greetings', cases });
    expect(dataset.status, dataset.text).to.equal(201);
    const datasetId = dataset.body.dataset.id as string;

    const under = await flowctl(['eval', 'run', datasetId, '--flow', flowId, '--against', String(old), '--min', '0.8'], env, 60_000);
    expect(under.code, under.stderr).to.equal(1);
    expect(under.stderr).to.match(/pass rate 50\.0% is below --min 80\.0%/);
    const lines = under.stdout.split('\n');
    expect(lines[0]).to.match(/^Evaluation \S+: completed \(8\/8\)$/);
    expect(lines[2]).to.match(new RegExp(`^CASE\\s+v${current}\\s+SCORE\\s+v${old}\\s+SCORE\\s+CHANGE$`));
    expect(lines[3]).to.match(/^1\s+pass\s+1\.00\s+fail\s+0\.00\s+improved$/);
    expect(lines[4]).to.match(/^2\s+fail\s+0\.00\s+pass\s+1\.00\s+regressed$/);
    expect(under.stdout).to.match(new RegExp(`v${current}\\s+2/4\\s+50\\.0%\\s+0\\.500`));
    expect(under.stdout).to.include(`v${current} against v${old}: pass rate +0.0%, 2 improved, 2 regressed`);

    const atMin = await flowctl(['eval', 'run', datasetId, '--flow', flowId, '--flow-version', String(current), '--min', '50%', '--json'], env, 60_000);
    expect(atMin.code, atMin.stderr).to.equal(0);
    const { evaluation } = JSON.parse(atMin.stdout);
    expect(evaluation.summaries).to.have.length(1);
    expect(evaluation.summaries[0]).to.deep.include({ flowVersion: current, passed: 2, cases: 4, passRate: 0.5 });

    const shown = await flowctl(['eval', 'show', evaluation.id, '--min', '0.9'], env);
    expect(shown.code).to.equal(1);
    const usage = await flowctl(['eval', 'run', datasetId, '--flow', flowId, '--min', '2'], env);
    expect(usage.code).to.equal(2);
    const missing = await flowctl(['eval', 'run', 'nope', '--flow', flowId], env);
    expect(missing.code, missing.stderr).to.equal(4);

    // Datasets from flowctl: a recorded run and a JSON Lines file.
    const run = await api('POST', `/flows/${flowId}/run`, { inputs: { who: 'cy' } });
    const file = join(env.configHome, 'cases.jsonl');
    writeFileSync(file, '{"input": {"who": "dee"}, "expected": "hello dee"}\n{"input": {"who": "eve"}}\n');
    const made = await flowctl(['eval', 'dataset-create', '--name', 'from cli', '--from-runs', run.body.processId, '--jsonl', file, '--json'], env);
    expect(made.code, made.stderr).to.equal(0);
    const { dataset: fromCli } = JSON.parse(made.stdout);
    expect(fromCli.cases.map((c: { input: unknown; expected: unknown }) => [c.input, c.expected])).to.deep.equal([[{ who: 'cy' }, 'hello cy'], [{ who: 'dee' }, 'hello dee'], [{ who: 'eve' }, null]]);
    const listed = await flowctl(['eval', 'datasets'], env);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.match(/^DATASET\s+NAME\s+CASES\s+UPDATED$/m);
    expect(listed.stdout).to.match(new RegExp(`^${fromCli.id}\\s+from cli\\s+3\\s`, 'm'));
  });
});
