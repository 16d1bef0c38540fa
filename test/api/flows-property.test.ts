/**
 * Property: whatever sequence of edits a client makes through the API, (1) the flow read back
 * equals the flow rebuilt from its events (`toFlowView(foldFlow(stream))`), and (2) for every
 * version n, the flow as of n (`flowAtVersion(events, n)`, and `GET /flows/{id}/versions/{n}`)
 * equals what the client saw right after the write that produced version n.
 *
 * The edits are drawn from a seeded generator (FLOWS_PROPERTY_SEED=<n> replays a run; the seed is
 * printed on failure). Some draws are invalid on purpose (a duplicate or cyclic connection, a bad
 * prompt); those must be refused without producing a version.
 */
import { expect } from 'chai';
import { flowAtVersion, flowStreamId, foldFlow, toFlowView } from '../../domain/flows/index.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const EDITS = 60;
const SEED = Number(process.env.FLOWS_PROPERTY_SEED ?? Date.now() % 1_000_000);

/** mulberry32: small, seedable, good enough to pick edits. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)];
    },
  };
}

interface SeenFlow {
  version: number;
  nodes: Array<{ id: string; data: Record<string, unknown> }>;
  edges: Array<{ id: string; source: string; target: string }>;
  archived: boolean;
  [key: string]: unknown;
}

for (const mode of availableModes()) {
  describe(`flows property: API edits agree with the event log (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let user: RegisteredUser;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      user = await registerUser(svc.baseUrl);
    });
    after(async () => svc?.stop());

    it(`${EDITS} random edits (seed ${SEED}): read model = fold of the stream, versions/{n} = what the client saw after write n`, async () => {
      const r = rng(SEED + (mode === 'distributed' ? 1 : 0));
      const api = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, user.auth);
      const created = await api('POST', '/flows', { name: 'property' });
      expect(created.status, created.text).to.equal(201);
      const flowId: string = created.body.flow.id;
      const base = `/flows/${flowId}`;
      const seen = new Map<number, SeenFlow>();
      let current: SeenFlow = created.body.flow;
      seen.set(current.version, current);
      const log: string[] = [];

      const transform = () => ({ nodeType: 'transform', template: `t${r.int(1000)} {{previous}}` });
      const llm = () => ({ nodeType: 'llm', llm: r.pick(['openai', 'offline']), model: 'gpt-4o', prompt: `p${r.int(1000)}` });
      const position = () => ({ x: r.int(2000) - 1000, y: r.int(2000) - 1000 });
      const others = (id: string) => current.nodes.filter((n) => n.id !== id).map((n) => n.id);

      type Edit = () => { label: string; send: () => ReturnType<typeof api> } | null;
      const edits: Array<[number, Edit]> = [
        [5, () => ({ label: 'add node', send: () => api('POST', `${base}/nodes`, { type: 'custom', position: position(), data: r.next() < 0.5 ? transform() : llm() }) })],
        [3, () => {
          if (current.nodes.length === 0) return null;
          const node = r.pick(current.nodes);
          const targets = others(node.id);
          const choice = r.int(3);
          const body =
            choice === 0 ? { position: position() }
            : choice === 1 && node.data.nodeType === 'transform' ? { data: { template: `u${r.int(1000)}`, variables: { k: r.int(10), m: [[r.int(3)]] } } }
            : targets.length > 0 ? { data: { conditions: [{ operator: 'contains', value: `v${r.int(10)}`, targetNodeId: r.pick(targets) }] } }
            : { type: r.pick(['custom', 'fancy']) };
          return { label: `update node ${JSON.stringify(body)}`, send: () => api('PUT', `${base}/nodes/${node.id}`, body) };
        }],
        [2, () => (current.nodes.length === 0 ? null : { label: 'delete node', send: () => api('DELETE', `${base}/nodes/${r.pick(current.nodes).id}`) })],
        [2, () => (current.nodes.length === 0 ? null : { label: 'duplicate node', send: () => api('POST', `${base}/nodes/${r.pick(current.nodes).id}/duplicate`, {}) })],
        [4, () => {
          if (current.nodes.length < 2) return null;
          // Mostly forward in insertion order (acyclic); sometimes backwards, which may be a CYCLE (400).
          let i = r.int(current.nodes.length);
          let j = r.int(current.nodes.length);
          if (i === j) return null;
          if (i > j && r.next() < 0.8) [i, j] = [j, i];
          const body = { source: current.nodes[i].id, target: current.nodes[j].id };
          return { label: `connect ${i}->${j}`, send: () => api('POST', `${base}/connections`, body) };
        }],
        [2, () => (current.edges.length === 0 ? null : { label: 'remove connection', send: () => api('DELETE', `${base}/connections/${r.pick(current.edges).id}`) })],
        [1, () => ({ label: 'rename', send: () => api('PATCH', `${base}/name`, { name: `name ${r.int(5)}` }) })],
        [1, () => ({ label: 'archive', send: () => api('PATCH', `${base}/archive`, { archived: r.next() < 0.5 }) })],
      ];
      const invalidNode = () => ({ label: 'add invalid node', send: () => api('POST', `${base}/nodes`, { type: 'custom', position: position(), data: { nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt: '' } }) });
      const weights = edits.reduce((s, [w]) => s + w, 0);
      const draw = (): Edit => {
        let x = r.int(weights);
        for (const [w, edit] of edits) if ((x -= w) < 0) return edit;
        return edits[0][1];
      };

      try {
        for (let done = 0; done < EDITS; ) {
          // Every 20th edit is certainly invalid (an llm node without a prompt): refused, no version.
          const edit = done % 20 === 10 ? invalidNode() : draw()();
          if (!edit) continue;
          done += 1;
          const res = await edit.send();
          log.push(`${edit.label} → ${res.status}${res.status >= 400 ? ` ${res.body?.error?.code}` : ''}`);
          expect(res.status, `${edit.label}: ${res.text}`).to.be.oneOf([200, 201, 400]);
          const got = await api('GET', base);
          expect(got.status).to.equal(200);
          const flow = got.body.flow as SeenFlow;
          if (res.status === 400) {
            expect(flow.version, 'a refused edit produces no version').to.equal(current.version);
          } else {
            expect(flow.version - current.version, 'one edit, at most one version').to.be.within(0, 1);
          }
          current = flow;
          seen.set(flow.version, flow);
        }

        const events = await svc.services.eventStore.readStream(flowStreamId(flowId));
        const final = await api('GET', base);
        expect(final.body.flow, 'the read model equals the fold of the stream').to.deep.equal(toFlowView(foldFlow(events)));
        expect(events.length - 1).to.equal(current.version);
        for (let n = 0; n < events.length; n++) {
          expect(seen.has(n), `the client saw version ${n}`).to.equal(true);
          expect(toFlowView(flowAtVersion(events, n)!), `flowAtVersion(${n})`).to.deep.equal(seen.get(n));
          const served = await api('GET', `${base}/versions/${n}`);
          expect(served.status, served.text).to.equal(200);
          expect(served.body.flow, `GET versions/${n}`).to.deep.equal(seen.get(n));
        }
        expect(log.filter((l) => / → 20/.test(l)).length, 'most edits succeed').to.be.greaterThan(EDITS / 2);
      } catch (err) {
        console.log(`flows property failed with FLOWS_PROPERTY_SEED=${SEED} (${mode}); edits:\n  ${log.join('\n  ')}`);
        throw err;
      }
    });
  });
}
