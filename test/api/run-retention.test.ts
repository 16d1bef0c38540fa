import { expect } from 'chai';
import { createRunRetention, type RunHistoryRetention } from '../../consumers/runs-retention.js';
import { orgRunRetentions, runRetentionQueries } from '../../projections/runs-retention.js';
import { TestClock } from '../support/clock.js';
import { registerUser, verifyEmailOf, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

/**
 * Retention of run history (issue 30, item 2): past the runs kept per flow or the days kept, a
 * finished run is cut down to its summary (RunHistoryPruned) and its node events leave the log;
 * the flow's stream is untouched, the summary survives a rebuild, and an organization sets its own.
 */
const DAY_MS = 24 * 3600 * 1000;

for (const mode of availableModes()) {
  describe(`run history retention (${mode})`, function () {
    this.timeout(90_000);
    const clock = new TestClock();
    let svc: TestService;
    let owner: RegisteredUser;
    const client = flowClient(() => svc);

    before(async () => {
      // Tokens that outlive the days the test clock moves on.
      svc = await startTestService(mode, { JWT_TTL_SECONDS: String(365 * 24 * 3600) }, { clock });
      owner = await registerUser(svc.baseUrl);
      // Verified, so the account outlives the days the clock moves on too.
      await verifyEmailOf(svc.baseUrl, svc.services.config.DATA_DIR, owner.email, owner.password);
    });
    after(async () => svc?.stop());

    const retention = (defaults: RunHistoryRetention) => {
      const { services } = svc;
      return createRunRetention({
        eventStore: services.eventStore,
        clock,
        logger: services.logger,
        queries: runRetentionQueries(services.readStore),
        orgRetentions: () => orgRunRetentions(services.readStore),
        defaults,
      });
    };
    const flowWithRuns = async (runs: number, user: { auth: Record<string, string> } = owner) => {
      const flowId = await client.newFlow(user);
      await client.addNode(user, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'echo {{inputs.word}}' } });
      const ids: string[] = [];
      for (let i = 0; i < runs; i++) {
        const res = await client.as(user, 'POST', `/flows/${flowId}/run`, { inputs: { word: `w${i}` } });
        expect(res.status, res.text).to.equal(200);
        ids.push(res.body.processId);
      }
      return { flowId, ids };
    };
    const processOf = async (id: string) => (await client.as(owner, 'GET', `/processes/${id}`)).body.process;
    const eventsOf = async (id: string) => (await client.as(owner, 'GET', `/processes/${id}/events?limit=100`)).body.events as Array<{ type: string; revision: number; data: any }>;
    /** The candidates' read model has seen every finished run of these ids. */
    const candidatesCaughtUp = (ids: string[]) =>
      waitUntil('the retention read model', async () => {
        const docs = await svc.services.readStore.collection('run_retention').find({ _id: { $in: ids } });
        return docs.length === ids.length && docs.every((d) => d.finished === true);
      });
    const prunedOf = (result: { pruned: Array<{ processId: string; reason: string }> }, ids: string[]) =>
      result.pruned.filter((p) => ids.includes(p.processId));

    it('keeps the newest runs of a flow whole and cuts the older ones down to a summary; the flow is untouched', async () => {
      const { flowId, ids } = await flowWithRuns(5);
      await candidatesCaughtUp(ids);
      const before = await processOf(ids[0]);
      expect(before.nodes[0].output).to.equal('echo w0');
      const fullEvents = await eventsOf(ids[0]);
      const flowVersion = (await client.getFlow(owner, flowId)).version;

      const sweep = retention({ keepDays: 30, keepLast: 3 });
      const first = await sweep.sweep();
      expect(prunedOf(first, ids)).to.deep.equal([
        { processId: ids[1], reason: 'count' },
        { processId: ids[0], reason: 'count' },
      ]);
      expect(prunedOf(await sweep.sweep(), ids), 'a second sweep prunes nothing more').to.deep.equal([]);

      const pruned = await waitUntil('the summary in the read model', async () => {
        const p = await processOf(ids[0]);
        return p.historyPruned ? p : null;
      });
      expect(pruned).to.include({ processId: ids[0], flowId, status: 'completed', startedAt: before.startedAt, finishedAt: before.finishedAt });
      expect(pruned.historyPruned).to.include({ reason: 'count', prunedEvents: fullEvents.length });
      expect(pruned.usage).to.deep.equal(before.usage);
      expect(pruned.nodes).to.have.length(1);
      expect(pruned.nodes[0]).to.include({ nodeId: before.nodes[0].nodeId, nodeType: 'transform', status: 'completed', executionTime: before.nodes[0].executionTime });
      expect(pruned.nodes[0].output, 'node outputs are not kept').to.equal(null);
      expect(pruned.outputs).to.equal(null);

      const left = await eventsOf(ids[0]);
      expect(left.map((e) => e.type), 'the stream starts at its summary').to.deep.equal(['RunHistoryPruned']);
      expect(left[0].revision).to.equal(fullEvents.length);
      expect(left[0].data).to.include({ reason: 'count', keepLast: 3, keepDays: 30, prunedEvents: fullEvents.length });
      const stored = await svc.services.eventStore.readStream(`run-${ids[0]}`);
      expect(stored.map((e) => e.type)).to.deep.equal(['RunHistoryPruned']);

      for (const kept of ids.slice(2)) expect((await processOf(kept)).historyPruned, kept).to.equal(null);
      expect((await eventsOf(ids[4]))[0].type).to.equal('RunRequested');
      expect((await client.getFlow(owner, flowId)).version, 'the flow stream is never pruned').to.equal(flowVersion);
      const listed = (await client.as(owner, 'GET', `/flows/${flowId}/processes?limit=10`)).body.items as Array<{ processId: string; historyPruned: unknown }>;
      expect(listed.map((p) => p.processId).sort(), 'pruned runs stay listed').to.deep.equal([...ids].sort());
      expect(listed.filter((p) => p.historyPruned !== null)).to.have.length(2);
    });

    it('prunes by age once the days kept have passed, and the summaries survive a rebuild of the read model', async () => {
      const { ids } = await flowWithRuns(2);
      await candidatesCaughtUp(ids);
      const sweep = retention({ keepDays: 7, keepLast: 100 });
      expect(prunedOf(await sweep.sweep(), ids), 'not due yet').to.deep.equal([]);
      clock.advance(8 * DAY_MS);
      const result = await sweep.sweep();
      expect(prunedOf(result, ids).map((p) => p.reason)).to.deep.equal(['age', 'age']);
      const views = await Promise.all(ids.map((id) => waitUntil('pruned', async () => ((await processOf(id)).historyPruned ? processOf(id) : null))));

      const rebuilt = await svc.services.projections.rebuild('processes');
      expect(rebuilt.events).to.be.greaterThan(0);
      for (const [i, id] of ids.entries()) expect(await processOf(id), 'rebuilt from the truncated stream').to.deep.equal(views[i]);
    });

    it("an organization sets its own retention (400 on a bad value); the sweep applies it to the organization's runs only", async () => {
      const created = await client.as(owner, 'POST', '/orgs', { name: `retention ${mode}` });
      expect(created.status, created.text).to.equal(201);
      const orgId = created.body.organization.id;
      const bad = await client.as(owner, 'PUT', `/orgs/${orgId}`, { runHistoryKeepDays: -1 });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('VALIDATION_FAILED');
      expect(JSON.stringify(bad.body.error)).to.contain('runHistoryKeepDays');
      const set = await client.as(owner, 'PUT', `/orgs/${orgId}`, { runHistoryKeepDays: 0, runHistoryKeepLast: 2 });
      expect(set.status, set.text).to.equal(200);
      expect(set.body.organization).to.include({ runHistoryKeepDays: 0, runHistoryKeepLast: 2 });
      expect(await orgRunRetentions(svc.services.readStore)).to.deep.include({ orgId, keepDays: 0, keepLast: 2 });

      const inOrg = { auth: { Authorization: `Bearer ${(await client.as(owner, 'POST', '/orgs/switch', { orgId })).body.token}` } };
      const org = await flowWithRuns(3, inOrg);
      const personal = await flowWithRuns(3);
      await candidatesCaughtUp([...org.ids, ...personal.ids]);
      const sweep = retention({ keepDays: 1, keepLast: 100 });
      const byCount = await sweep.sweep();
      expect(prunedOf(byCount, org.ids), "the organization's keepLast 2").to.deep.equal([{ processId: org.ids[0], reason: 'count' }]);
      expect(prunedOf(byCount, personal.ids), 'the service default keeps 100').to.deep.equal([]);
      clock.advance(2 * DAY_MS);
      const byAge = await sweep.sweep();
      expect(prunedOf(byAge, personal.ids).map((p) => p.reason), 'the service default keeps a day').to.deep.equal(['age', 'age', 'age']);
      expect(prunedOf(byAge, org.ids), 'the organization keeps its runs without an age bound').to.deep.equal([]);

      const reset = await client.as(owner, 'PUT', `/orgs/${orgId}`, { runHistoryKeepLast: null });
      expect(reset.body.organization).to.include({ runHistoryKeepDays: 0, runHistoryKeepLast: null });
    });
  });
}
