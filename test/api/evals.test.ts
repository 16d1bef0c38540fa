import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { evalRunPorts } from '../../api/routes/evals.js';
import { claimEvaluation, recordCaseResult, requestEvaluation, visibleDataset, visibleEvaluation } from '../../commands/evals.js';
import { executeWorkerCommand } from '../../commands/workers.js';
import { resumeEvaluations } from '../../consumers/evals.js';
import { localWork } from '../../ports/local-work.js';
import { startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { answer } from '../support/api-client.js';
import { expectError, flowClient } from './flows-support.js';

/**
 * Issue 33 item 4: evaluations. A 20-case dataset (5 cases from recorded runs, one of them edited,
 * 15 uploaded as JSON Lines) evaluated on two versions of a flow whose llm node runs on the offline
 * provider, scored by exact, contains, regex, JSON Schema and a judge on a fake OpenAI-compatible
 * server; per-case results, aggregates and the differences between the versions; progress while
 * it runs; another tenant's dataset and evaluation are 404.
 */
for (const mode of availableModes()) {
  describe(`evals: datasets and evaluations (${mode})`, function () {
    this.timeout(180_000);
    let svc: TestService;
    let judge: FakeLlmServer;
    let alice: RegisteredUser;
    let mallory: RegisteredUser;
    const client = flowClient(() => svc);
    const { as } = client;

    before(async () => {
      judge = await startFakeOpenAi();
      svc = await startTestService(mode, { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${judge.url}/v1`, LLM_MAX_RETRIES: '0' });
      alice = await registerUser(svc.baseUrl);
      mallory = await registerUser(svc.baseUrl);
    });
    after(async () => {
      await svc?.stop();
      await judge?.close();
    });

    const llmNode = (prompt: string) => ({ type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt } });
    const judgeVerdict = '{"score": 0.9, "pass": true, "reason": "answers the question"}';
    const scorers = [
      { type: 'exact' },
      { type: 'contains', name: 'mentions answer', value: 'answer', ignoreCase: true },
      { type: 'regex', pattern: '^(answer|ANSWER) \\d+$' },
      { type: 'jsonSchema', schema: { type: 'string', maxLength: 20 } },
      { type: 'judge', rubric: 'The answer names the number asked about.' },
    ];

    /** A flow answering "answer <n>" at `old`, "ANSWER <n>" now; five recorded runs of the old version. */
    async function flowWithTwoVersions() {
      const flowId = await client.newFlow(alice);
      const node = await client.addNode(alice, flowId, llmNode('answer {{inputs.n}}'));
      const runs: string[] = [];
      let old = -1;
      for (let n = 0; n < 5; n++) {
        const run = await as(alice, 'POST', `/flows/${flowId}/run`, { inputs: { n } });
        expect(run.status, run.text).to.equal(200);
        expect(run.body.outputs[node.id]).to.equal(`answer ${n}`);
        runs.push(run.body.processId);
        old = run.body.flowVersion;
      }
      const changed = await as(alice, 'PUT', `/flows/${flowId}/nodes/${node.id}`, { data: { ...node.data, prompt: 'ANSWER {{inputs.n}}' } });
      expect(changed.status, changed.text).to.equal(200);
      const current = (await client.getFlow(alice, flowId)).version as number;
      expect(current).to.be.greaterThan(old);
      return { flowId, runs, old, current };
    }

    it('a dataset from recorded runs (expected outputs edited) and JSONL; two versions evaluated side by side: per case, aggregates, differences, progress', async () => {
      const f = await flowWithTwoVersions();
      const created = await as(alice, 'POST', '/evals/datasets', { name: 'answers', fromRuns: f.runs });
      expect(created.status, created.text).to.equal(201);
      const dataset = created.body.dataset;
      expect(dataset.caseCount).to.equal(5);
      expect(dataset.cases[0]).to.deep.include({ input: { n: 0 }, expected: 'answer 0', source: { kind: 'run', processId: f.runs[0], flowId: f.flowId } });

      // The user corrects the expected output of the case recorded from n = 4.
      const four = dataset.cases.find((c: { input: { n: number } }) => c.input.n === 4);
      const edited = await as(alice, 'PATCH', `/evals/datasets/${dataset.id}/cases/${four.id}`, { expected: 'ANSWER 4' });
      expect(edited.status, edited.text).to.equal(200);
      expect(edited.body.dataset.cases.find((c: { id: string }) => c.id === four.id).expected).to.equal('ANSWER 4');

      const lines = Array.from({ length: 15 }, (_, i) => i + 5).map((n) => JSON.stringify({ input: { n }, expected: n < 10 ? `answer ${n}` : `ANSWER ${n}` }));
      const uploaded = await as(alice, 'POST', `/evals/datasets/${dataset.id}/cases`, { jsonl: `${lines.join('\n')}\n` });
      expect(uploaded.status, uploaded.text).to.equal(200);
      expect(uploaded.body.dataset.caseCount).to.equal(20);
      expect(uploaded.body.dataset.cases[19]).to.deep.include({ input: { n: 19 }, expected: 'ANSWER 19', source: { kind: 'upload' } });

      // The judge answers slowly enough for the progress to be seen.
      judge.reset();
      judge.text = judgeVerdict;
      judge.delayMs = 100;
      const started = await as(alice, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId: f.flowId, against: f.old, scorers, concurrency: 2 });
      expect(started.status, started.text).to.equal(202);
      const evaluationId = started.body.evaluation.id;
      expect(started.body.evaluation).to.deep.include({ status: 'running', versions: [{ variant: 'a', flowVersion: f.current }, { variant: 'b', flowVersion: f.old }] });
      expect(started.body.evaluation.progress.total).to.equal(40);

      const seen: number[] = [];
      const done = await waitUntil('the evaluation completes', async () => {
        const res = await as(alice, 'GET', `/evals/evaluations/${evaluationId}`);
        expect(res.status, res.text).to.equal(200);
        if (res.body.evaluation.status === 'running') seen.push(res.body.evaluation.progress.done);
        return res.body.evaluation.status === 'completed' && res.body.evaluation;
      }, 120_000, 100);
      expect(seen.some((n) => n > 0 && n < 40), `progress seen while running: ${seen.join(',')}`).to.equal(true);
      expect(done.progress).to.deep.equal({ done: 40, total: 40 });

      const [a, b] = done.summaries;
      expect(a).to.deep.include({ variant: 'a', flowVersion: f.current, cases: 20, passed: 11, failed: 9, errored: 0, passRate: 0.55 });
      expect(b).to.deep.include({ variant: 'b', flowVersion: f.old, cases: 20, passed: 9, failed: 11, errored: 0, passRate: 0.45 });
      // Offline runs cost nothing; the judge (gpt-4o on the fake: 1,200 tokens a call) is counted apart.
      expect(a.tokens).to.be.greaterThan(0);
      expect(a.cost).to.equal(0);
      expect(a.judgeTokens).to.equal(20 * 1200);
      expect(a.judgeCost).to.be.greaterThan(0);
      expect(a.latencyMs.mean).to.be.a('number');
      expect(judge.requestsTo('/chat/completions')).to.have.length(40);

      const nOf = (caseId: string) => uploaded.body.dataset.cases.find((c: { id: string }) => c.id === caseId).input.n as number;
      expect(done.differences.passRate).to.equal(0.1);
      expect(done.differences.improved.map(nOf).sort((x: number, y: number) => x - y)).to.deep.equal([4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
      expect(done.differences.regressed.map(nOf).sort((x: number, y: number) => x - y)).to.deep.equal([0, 1, 2, 3, 5, 6, 7, 8, 9]);

      const row = done.cases.find((c: { caseId: string }) => nOf(c.caseId) === 12);
      expect(row.change).to.equal('improved');
      expect(row.a).to.deep.include({ status: 'completed', output: 'ANSWER 12', pass: true, error: null });
      expect(row.a.scores.map((s: { scorer: string; pass: boolean }) => [s.scorer, s.pass])).to.deep.equal([['exact', true], ['mentions answer', true], ['regex', true], ['jsonSchema', true], ['judge', true]]);
      expect(row.a.scores[4]).to.deep.include({ score: 0.9, reason: 'answers the question' });
      expect(row.b).to.deep.include({ output: 'answer 12', pass: false });
      expect(row.b.scores[0]).to.deep.include({ scorer: 'exact', pass: false, score: 0 });
      expect(row.scoreDelta).to.equal(0.2);
      // The typed client reads the same report.
      const typed = await answer(client.api(alice).GET('/evals/evaluations/{evaluationId}', { params: { path: { evaluationId } } }));
      expect(typed.status, typed.text).to.equal(200);
      expect(typed.data!.evaluation.differences!.improved).to.have.length(11);
      // Each result names the run it came from; the run is an ordinary run of that flow version.
      const run = await as(alice, 'GET', `/processes/${row.a.processId}`);
      expect(run.status, run.text).to.equal(200);

      const list = await waitUntil('the list shows the evaluation completed', async () => {
        const res = await as(alice, 'GET', `/evals/evaluations?datasetId=${dataset.id}`);
        return res.body.items?.[0]?.status === 'completed' && res.body;
      });
      expect(list.items[0]).to.deep.include({ id: evaluationId, progress: { done: 40, total: 40 }, passed: { a: 11, b: 9 } });
      const datasets = await as(alice, 'GET', '/evals/datasets?limit=5');
      expect(datasets.body.items.map((d: { id: string }) => d.id)).to.include(dataset.id);

      // Another tenant sees none of it.
      expectError(await as(mallory, 'GET', `/evals/datasets/${dataset.id}`), 404, 'DATASET_NOT_FOUND');
      expectError(await as(mallory, 'GET', `/evals/evaluations/${evaluationId}`), 404, 'EVALUATION_NOT_FOUND');
      expectError(await as(mallory, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId: f.flowId, scorers }), 404, 'DATASET_NOT_FOUND');
      expectError(await as(mallory, 'PATCH', `/evals/datasets/${dataset.id}/cases/${four.id}`, { expected: 'x' }), 404, 'DATASET_NOT_FOUND');
      expect((await as(mallory, 'GET', '/evals/evaluations')).body.items).to.deep.equal([]);
    });

    it('an evaluation whose runner died goes on from where it stopped (after the lease, or at once when its process is known stopped); a live runner is left alone', async () => {
      const f = await flowWithTwoVersions();
      const cases = [1, 2, 3].map((n) => ({ input: { n }, expected: `ANSWER ${n}` }));
      const datasetId = (await as(alice, 'POST', '/evals/datasets', { name: 'resume', cases })).body.dataset.id as string;
      const { services } = svc;
      const scope = { userId: alice.user.id, orgId: null, workspaceId: null };
      const dataset = await visibleDataset(services.eventStore, scope, datasetId);
      const [c1] = dataset.state.cases.map((c) => c.caseId);
      const context = (minutesAgo: number) => ({ actorId: alice.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date(Date.now() - minutesAgo * 60_000) });
      const ask = async (runner: string, minutesAgo: number) => {
        const evaluationId = services.newId();
        await requestEvaluation(services.eventStore, context(minutesAgo), scope, {
          evaluationId, flowId: f.flowId, scorers: [{ type: 'exact', ignoreCase: false }], concurrency: 2,
          dataset: { datasetId, revision: dataset.revision, caseIds: dataset.state.cases.map((c) => c.caseId) }, variants: [{ variant: 'a', flowVersion: f.current }],
        });
        await claimEvaluation(services.eventStore, context(minutesAgo), evaluationId, runner);
        return evaluationId;
      };
      // A runner that died 20 minutes ago after recording one case (its output made up: it must be kept, not run again).
      const dead = await ask('dead-runner', 20);
      await recordCaseResult(services.eventStore, context(20), dead, {
        caseId: c1, variant: 'a', processId: 'from-the-dead-runner', status: 'completed', output: 'ANSWER 1', outputTruncated: false, error: null,
        scores: [{ scorer: 'exact', score: 1, pass: true, reason: null }], pass: true, score: 1, latencyMs: 5, tokens: 2, cost: 0, judgeTokens: 0, judgeCost: 0,
      });
      // One whose runner claimed it a moment ago: alive.
      const alive = await ask('live-runner', 0);
      // One claimed a moment ago by a process that has since stopped (its worker presence says so): no need to wait out the lease.
      const stoppedRunner = `stopped-${randomUUID()}`;
      await executeWorkerCommand(services.eventStore, context(1), stoppedRunner, { type: 'StartWorker', workerId: stoppedRunner, host: 'h', pid: 1, role: 'all', heartbeatMs: 10_000, consumers: [] });
      const orphan = await ask(stoppedRunner, 0);
      await executeWorkerCommand(services.eventStore, context(0), stoppedRunner, { type: 'StopWorker' });

      const work = localWork<void>();
      const ids = [dead, alive, orphan];
      const running = async () => ids.map((id) => ({ _id: id, ownerId: alice.user.id, orgId: null, workspaceId: null }));
      expect(await resumeEvaluations({ ...evalRunPorts(services), work, running, heartbeatMs: 10_000 }, 'new-runner')).to.equal(3);
      await Promise.all(ids.map((id) => work.get(id)?.done));
      expect((await visibleEvaluation(services.eventStore, scope, orphan)).state).to.deep.include({ status: 'completed', runner: 'new-runner' });

      const resumed = (await visibleEvaluation(services.eventStore, scope, dead)).state;
      expect(resumed).to.deep.include({ status: 'completed', runner: 'new-runner' });
      expect(Object.values(resumed.results).map((r) => [r.caseId === c1, r.processId === 'from-the-dead-runner', r.pass])).to.have.deep.members([[true, true, true], [false, false, true], [false, false, true]]);
      const untouched = (await visibleEvaluation(services.eventStore, scope, alive)).state;
      expect(untouched).to.deep.include({ status: 'running', runner: 'live-runner', results: {} });
    });

    it("within the organization's budget: a spent budget is each case's error (BUDGET_EXCEEDED), not a crash, and no judge is called", async () => {
      const org = await as(alice, 'POST', '/orgs', { name: `Evals ${mode}` });
      expect(org.status, org.text).to.equal(201);
      const orgId = org.body.organization.id;
      const switched = await as(alice, 'POST', '/orgs/switch', { orgId });
      const inOrg = { auth: { Authorization: `Bearer ${switched.body.token}` } };
      expect((await as(inOrg, 'PUT', `/orgs/${orgId}`, { budgetLimitUsd: 0 })).status).to.equal(200);
      const flowId = await client.newFlow(inOrg);
      await client.addNode(inOrg, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: 'hi {{inputs.n}}' } });
      const dataset = (await as(inOrg, 'POST', '/evals/datasets', { name: 'paid', cases: [{ input: { n: 1 }, expected: 'x' }, { input: { n: 2 }, expected: 'y' }] })).body.dataset;
      judge.reset();
      const started = await as(inOrg, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId, scorers: [{ type: 'exact' }, { type: 'judge', rubric: 'r' }] });
      expect(started.status, started.text).to.equal(202);
      const done = await waitUntil('the evaluation ends', async () => {
        const res = await as(inOrg, 'GET', `/evals/evaluations/${started.body.evaluation.id}`);
        return res.body.evaluation.status !== 'running' && res.body.evaluation;
      }, 60_000, 100);
      expect(done.status).to.equal('completed');
      expect(done.summaries[0]).to.deep.include({ cases: 2, passed: 0, errored: 2, passRate: 0 });
      expect(done.cases.map((c: any) => [c.a.status, c.a.error.code, c.a.processId])).to.deep.equal([['error', 'BUDGET_EXCEEDED', null], ['error', 'BUDGET_EXCEEDED', null]]);
      expect(judge.requests).to.have.length(0);
      // The personal workspace's evaluations are not the organization's.
      expectError(await as(alice, 'GET', `/evals/evaluations/${started.body.evaluation.id}`), 404, 'EVALUATION_NOT_FOUND');
    });

    it('cancel: no further case starts, the results recorded stay; cancelling again is 409, another tenant 404', async () => {
      const f = await flowWithTwoVersions();
      const cases = Array.from({ length: 6 }, (_, n) => ({ input: { n }, expected: `ANSWER ${n}` }));
      const dataset = (await as(alice, 'POST', '/evals/datasets', { name: 'to cancel', cases })).body.dataset;
      judge.reset();
      judge.text = judgeVerdict;
      judge.delayMs = 400;
      const started = await as(alice, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId: f.flowId, scorers: [{ type: 'judge', rubric: 'r' }], concurrency: 1 });
      const id = started.body.evaluation.id as string;
      await waitUntil('one case scored', async () => (await as(alice, 'GET', `/evals/evaluations/${id}`)).body.evaluation.progress.done >= 1, 30_000, 50);
      expectError(await as(mallory, 'POST', `/evals/evaluations/${id}/cancel`), 404, 'EVALUATION_NOT_FOUND');
      const cancelled = await as(alice, 'POST', `/evals/evaluations/${id}/cancel`);
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body.evaluation.status).to.equal('cancelled');
      const doneAtCancel = cancelled.body.evaluation.progress.done as number;
      await new Promise((r) => setTimeout(r, 1_500));
      const after = (await as(alice, 'GET', `/evals/evaluations/${id}`)).body.evaluation;
      expect(after.status).to.equal('cancelled');
      expect(after.progress.done).to.equal(doneAtCancel);
      expect(after.progress.done).to.be.lessThan(6);
      expect(after.summaries[0].cases).to.equal(doneAtCancel);
      expectError(await as(alice, 'POST', `/evals/evaluations/${id}/cancel`), 409, 'EVALUATION_FINISHED');
    });

    it("a judge that cannot answer fails that score only, with the provider's code; an unreadable answer too", async () => {
      const f = await flowWithTwoVersions();
      const dataset = (await as(alice, 'POST', '/evals/datasets', { name: 'judged', cases: [1, 2].map((n) => ({ input: { n }, expected: `ANSWER ${n}` })) })).body.dataset;
      judge.reset();
      judge.failures = [{ status: 500 }];
      judge.text = 'I would rather not say.';
      const started = await as(alice, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId: f.flowId, scorers: [{ type: 'exact' }, { type: 'judge', rubric: 'r' }], concurrency: 1 });
      const done = await waitUntil('the evaluation ends', async () => {
        const res = await as(alice, 'GET', `/evals/evaluations/${started.body.evaluation.id}`);
        return res.body.evaluation.status !== 'running' && res.body.evaluation;
      }, 60_000, 100);
      expect(done.status).to.equal('completed');
      const reasons = done.cases.map((c: any) => c.a.scores[1].reason as string);
      expect(reasons[0]).to.match(/^PROVIDER_/);
      expect(reasons[1]).to.match(/^JUDGE_UNREADABLE/);
      expect(done.cases.map((c: any) => [c.a.scores[0].pass, c.a.scores[1].pass, c.a.pass, c.a.score])).to.deep.equal([[true, false, false, 0.5], [true, false, false, 0.5]]);
    });

    it('refuses bad input naming the field, before anything is recorded', async () => {
      const f = await flowWithTwoVersions();
      const dataset = (await as(alice, 'POST', '/evals/datasets', { name: 'tiny', cases: [{ input: { n: 1 }, expected: 'answer 1' }] })).body.dataset;
      const ask = (body: Record<string, unknown>) => () => as(alice, 'POST', '/evals/evaluations', { datasetId: dataset.id, flowId: f.flowId, scorers: [{ type: 'exact' }], ...body });
      await client.refusedWithoutEvents(ask({ scorers: [{ type: 'regex', pattern: '(a)\\1' }] }), 400, 'VALIDATION_FAILED', 'body.scorers.0.pattern');
      await client.refusedWithoutEvents(ask({ scorers: [{ type: 'jsonSchema', schema: { type: 'nope' } }] }), 400, 'VALIDATION_FAILED', 'body.scorers.0.schema');
      await client.refusedWithoutEvents(ask({ scorers: [{ type: 'levenshtein' }] }), 400, 'VALIDATION_FAILED');
      await client.refusedWithoutEvents(ask({ against: f.current }), 400, 'VALIDATION_FAILED', 'body.against');
      await client.refusedWithoutEvents(ask({ scorers: [{ type: 'judge', rubric: 'r'.repeat(9_000) }, ...Array.from({ length: 8 }, () => ({ type: 'judge', rubric: 'r'.repeat(9_000) }))] }), 400, 'VALIDATION_FAILED', 'body.scorers');
      await client.refusedWithoutEvents(ask({ version: 10_000 }), 404, 'VERSION_NOT_FOUND');
      await client.refusedWithoutEvents(ask({ concurrency: 99 }), 400, 'VALIDATION_FAILED', 'body.concurrency');
      await client.refusedWithoutEvents(() => as(alice, 'POST', `/evals/datasets/${dataset.id}/cases`, { jsonl: '{"input": {"n": 1}}\nnot json\n' }), 400, 'VALIDATION_FAILED', 'body.jsonl');
      await client.refusedWithoutEvents(() => as(alice, 'POST', '/evals/datasets', { name: '' }), 400, 'VALIDATION_FAILED', 'body.name');
      await client.refusedWithoutEvents(() => as(alice, 'POST', '/evals/datasets', { name: 'x', fromRuns: ['nope'] }), 404, 'PROCESS_NOT_FOUND');
      expectError(await as(alice, 'GET', '/evals/evaluations/unknown'), 404, 'EVALUATION_NOT_FOUND');
    });
  });
}
