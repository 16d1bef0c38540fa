import { expect } from 'chai';
import { flowAtVersion, flowStreamId, toFlowView } from '../../domain/flows/index.js';
import { SNAPSHOTS_KEPT, snapshotStreamId, type SnapshotData } from '../../domain/shared/snapshots.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError } from './orgs-support.js';

type Res = Awaited<ReturnType<typeof call>>;
const EVERY = 5;

/**
 * A flow edited far more than SNAPSHOT_EVERY times over HTTP: its snapshots exist, writes and
 * If-Match go on working, and time travel answers exactly what folding the log from zero gives.
 */
for (const mode of availableModes()) {
  describe(`Flow snapshots, SNAPSHOT_EVERY=${EVERY} (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode, { SNAPSHOT_EVERY: String(EVERY), RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(svc.baseUrl, method, path, body, { ...owner.auth, ...headers });
    const ok = (res: Res, status = 200) => {
      expect(res.status, res.text).to.equal(status);
      return res;
    };

    it('snapshots a long flow; writes, If-Match and time travel answer as without snapshots', async () => {
      const flowId = ok(await api('POST', '/flows', { name: 'Edited a lot' }), 201).body.flow.id as string;
      const nodes: string[] = [];
      for (let i = 0; i < 12; i++) {
        const node = ok(await api('POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: i, y: 0 }, data: { nodeType: 'transform', template: `t${i}` } }), 201).body.node;
        nodes.push(node.id);
        ok(await api('PATCH', `/flows/${flowId}/name`, { name: `Edited ${i}` }));
        ok(await api('PUT', `/flows/${flowId}/nodes/${node.id}`, { position: { x: i, y: 10 } }));
        if (i > 0) ok(await api('POST', `/flows/${flowId}/connections`, { source: nodes[i - 1], target: node.id }), 201);
        if (i % 4 === 3) ok(await api('DELETE', `/flows/${flowId}/nodes/${nodes[i - 2]}`));
      }
      const current = ok(await api('GET', `/flows/${flowId}`)).body.flow;
      const last = current.version as number;
      expect(last).to.be.above(8 * EVERY);

      const store = svc.services.eventStore;
      const kept = await store.readStream(snapshotStreamId(flowStreamId(flowId)));
      expect(kept.length, 'snapshots kept').to.be.within(2, SNAPSHOTS_KEPT);
      const revisions = kept.map((e) => (e.data as SnapshotData).revision);
      expect(last - Math.max(...revisions)).to.be.below(EVERY);

      // Commands go on: If-Match of the current version writes, a stale one is refused.
      const renamed = ok(await api('PATCH', `/flows/${flowId}/name`, { name: 'Final' }, { 'If-Match': `"${last}"` })).body.flow;
      expect(renamed).to.include({ name: 'Final', version: last + 1 });
      expectError(await api('PATCH', `/flows/${flowId}/name`, { name: 'Stale' }, { 'If-Match': `"${last}"` }), 412);

      // Time travel, early and late, equals folding the log from zero (what the route did before snapshots).
      const events = await store.readStream(flowStreamId(flowId));
      const oldest = Math.min(...revisions);
      const probes = [0, 1, EVERY, oldest - 1, oldest, oldest + 1, ...revisions, last, last + 1].filter((r) => r >= 0 && r <= last + 1);
      for (const version of new Set(probes)) {
        const res = ok(await api('GET', `/flows/${flowId}/versions/${version}`));
        const fromZero = flowAtVersion(events, version)!;
        expect(res.body, `version ${version}`).to.deep.equal({ success: true, version, deleted: false, flow: JSON.parse(JSON.stringify(toFlowView(fromZero))) });
      }
      expect(ok(await api('GET', `/flows/${flowId}/versions/${last + 1}`)).body.flow.name).to.equal('Final');
      const beyond = await api('GET', `/flows/${flowId}/versions/${last + 2}`);
      expectError(beyond, 404, 'VERSION_NOT_FOUND');
      expect(beyond.body.error.details).to.deep.equal({ latest: last + 1 });
    });
  });
}
