import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../../commands/users-credentials.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { expectError, fields } from './orgs-support.js';

type Res = Awaited<ReturnType<typeof call>>;

for (const mode of availableModes()) {
  describe(`Audit and replay (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    let viewOnly: Record<string, string>;
    let editOnly: Record<string, string>;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
      const key = async (scopes: string[]) => {
        const res = await call(svc.baseUrl, 'POST', '/api-keys', { name: scopes.join(' '), scopes }, owner.auth);
        expect(res.status, res.text).to.equal(201);
        return { Authorization: `Bearer ${res.body.key}` };
      };
      viewOnly = await key(['view_resources']);
      editOnly = await key(['edit_resources']);
    });
    after(async () => svc?.stop());

    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = owner.auth) => call(svc.baseUrl, method, path, body, headers);
    const ok = (res: Res, status = 200) => {
      expect(res.status, res.text).to.equal(status);
      return res;
    };

    /**
     * A flow edited step by step over HTTP; `seen[n]` is the flow as GET showed it right after the
     * write that made version n (creation is version 0).
     */
    async function editedFlow() {
      const seen: Record<number, unknown> = {};
      const snapshot = async (flowId: string) => {
        const res = ok(await api('GET', `/flows/${flowId}`));
        seen[res.body.flow.version] = res.body.flow;
      };
      const flowId = ok(await api('POST', '/flows', { name: 'Audited', description: 'before' }), 201).body.flow.id as string;
      await snapshot(flowId);
      const node = async () => ok(await api('POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x: 1, y: 2 }, data: { nodeType: 'transform', template: 'x' } }), 201).body.node.id as string;
      const a = await node();
      await snapshot(flowId);
      const b = await node();
      await snapshot(flowId);
      ok(await api('POST', `/flows/${flowId}/connections`, { source: a, target: b, label: 'go' }), 201);
      await snapshot(flowId);
      ok(await api('DELETE', `/flows/${flowId}/nodes/${b}`));
      await snapshot(flowId);
      const { key } = ok(await api('POST', `/flows/${flowId}/trigger/regenerate-key`)).body;
      await snapshot(flowId);
      ok(await api('PUT', `/flows/${flowId}/trigger`, { enabled: true }));
      await snapshot(flowId);
      return { flowId, a, b, key: key as string, seen };
    }

    describe('GET /flows/{flowId}/events', () => {
      it('lists who did what and when, newest first, with key hashes hidden', async () => {
        const started = Date.now();
        const { flowId, key } = await editedFlow();
        const res = ok(await api('GET', `/flows/${flowId}/events?limit=100`));
        expect(res.body.success).to.equal(true);
        expect(res.body.nextCursor).to.equal(null);
        const items = res.body.items as Array<{ revision: number; type: string; at: string; actorId: string; requestId: string; correlationId: string; data: any }>;
        expect(items.map((e) => e.type)).to.deep.equal([
          'FlowTriggerUpdated',
          'FlowTriggerKeyRegenerated',
          'NodeDeleted',
          'ConnectionAdded',
          'NodeAdded',
          'NodeAdded',
          'FlowCreated',
        ]);
        expect(items.map((e) => e.revision)).to.deep.equal([6, 5, 4, 3, 2, 1, 0]);
        for (const e of items) {
          expect(e.actorId).to.equal(owner.user.id);
          expect(Date.parse(e.at)).to.be.within(started - 1000, Date.now() + 1000);
          expect(e.requestId).to.be.a('string');
          expect(e.correlationId).to.be.a('string');
        }
        expect(new Set(items.map((e) => e.requestId)).size, 'one request per write').to.equal(items.length);
        expect(items[6].data).to.include({ name: 'Audited', description: 'before', ownerId: owner.user.id });
        expect(items[3].data.edge).to.include({ label: 'go' });
        expect(items[1].data.keyHash).to.equal('[hash]');
        expect(res.text).to.not.include(sha256(key)).and.not.include(key);
      });

      it('pages with limit and cursor in both orders; the pages together are the whole stream', async () => {
        const { flowId } = await editedFlow();
        const walk = async (order: string) => {
          const revisions: number[] = [];
          let cursor: string | null = null;
          let pages = 0;
          do {
            const query: string = `limit=3&order=${order}${cursor === null ? '' : `&cursor=${cursor}`}`;
            const page = ok(await api('GET', `/flows/${flowId}/events?${query}`));
            expect(page.body.items.length).to.be.at.most(3);
            revisions.push(...page.body.items.map((e: { revision: number }) => e.revision));
            cursor = page.body.nextCursor;
            pages++;
          } while (cursor !== null);
          expect(pages).to.equal(3);
          return revisions;
        };
        expect(await walk('asc')).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
        expect(await walk('desc')).to.deep.equal([6, 5, 4, 3, 2, 1, 0]);
      });

      it('400 on a bad limit, cursor, order or unknown parameter; 401; 403 without view_resources; allowed with it', async () => {
        const { flowId } = await editedFlow();
        for (const [query, field] of [
          ['limit=0', 'query.limit'],
          ['limit=101', 'query.limit'],
          ['cursor=abc', 'query.cursor'],
          ['cursor=-1', 'query.cursor'],
          ['order=sideways', 'query.order'],
          ['type=NodeAdded', 'query.type'],
        ]) {
          const res = await api('GET', `/flows/${flowId}/events?${query}`);
          expectError(res, 400, 'VALIDATION_FAILED');
          expect(fields(res), query).to.include(field);
        }
        expectError(await api('GET', '/flows/bad$id/events'), 400, 'VALIDATION_FAILED');
        expectError(await api('GET', `/flows/${flowId}/events`, undefined, {}), 401);
        expectError(await api('GET', `/flows/${flowId}/events`, undefined, editOnly), 403, 'FORBIDDEN');
        expect(ok(await api('GET', `/flows/${flowId}/events`, undefined, viewOnly)).body.items).to.have.length(7);
      });

      it('404 for an unknown flow', async () => {
        expectError(await api('GET', `/flows/${randomUUID()}/events`), 404, 'FLOW_NOT_FOUND');
      });

      it("a deleted flow's history stays readable by its owner, and only by them", async () => {
        const { flowId } = await editedFlow();
        ok(await api('DELETE', `/flows/${flowId}`));
        expectError(await api('GET', `/flows/${flowId}`), 404, 'FLOW_NOT_FOUND');
        const res = ok(await api('GET', `/flows/${flowId}/events?limit=1`));
        expect(res.body.items[0]).to.include({ type: 'FlowDeleted', actorId: owner.user.id, revision: 7 });
        const last = ok(await api('GET', `/flows/${flowId}/versions/7`));
        expect(last.body.deleted).to.equal(true);
        expect(ok(await api('GET', `/flows/${flowId}/versions/6`)).body.deleted).to.equal(false);
        expectError(await api('GET', `/flows/${flowId}/events`, undefined, other.auth), 404, 'FLOW_NOT_FOUND');
        expectError(await api('GET', `/flows/${flowId}/versions/0`, undefined, other.auth), 404, 'FLOW_NOT_FOUND');
      });
    });

    describe('GET /flows/{flowId}/versions/{version}', () => {
      it('returns exactly the flow the client saw after each write, rebuilt from the log', async () => {
        const { flowId, seen } = await editedFlow();
        for (const [version, flow] of Object.entries(seen)) {
          const res = ok(await api('GET', `/flows/${flowId}/versions/${version}`));
          expect(res.body).to.deep.equal({ success: true, version: Number(version), deleted: false, flow });
        }
      });

      it('travels back in time: a node added then deleted is in the version that had it, not in the latest', async () => {
        const { flowId, a, b } = await editedFlow();
        const withB = ok(await api('GET', `/flows/${flowId}/versions/3`)).body.flow;
        expect(withB.nodes.map((n: { id: string }) => n.id)).to.deep.equal([a, b]);
        expect(withB.edges).to.have.length(1);
        expect(withB.trigger.hasKey).to.equal(false);
        const latest = ok(await api('GET', `/flows/${flowId}/versions/6`)).body.flow;
        expect(latest.nodes.map((n: { id: string }) => n.id)).to.deep.equal([a]);
        expect(latest.edges).to.deep.equal([]);
        expect(latest.trigger).to.include({ enabled: true, hasKey: true });
        expect(JSON.stringify(latest)).to.not.match(/keyHash/);
        const created = ok(await api('GET', `/flows/${flowId}/versions/0`)).body.flow;
        expect(created).to.include({ name: 'Audited', version: 0 });
        expect(created.nodes).to.deep.equal([]);
      });

      it('404 VERSION_NOT_FOUND beyond the stream; 400 naming params.version for a non-integer', async () => {
        const { flowId } = await editedFlow();
        const beyond = await api('GET', `/flows/${flowId}/versions/7`);
        expectError(beyond, 404, 'VERSION_NOT_FOUND');
        expect(beyond.body.error.details).to.deep.equal({ latest: 6 });
        for (const bad of ['-1', '1.5', 'abc', '1e2', '9999999999']) {
          const res = await api('GET', `/flows/${flowId}/versions/${bad}`);
          expectError(res, 400, 'VALIDATION_FAILED');
          expect(fields(res), bad).to.deep.equal(['params.version']);
        }
      });

      it('401, 403 without view_resources, 404 for an unknown flow', async () => {
        const { flowId } = await editedFlow();
        expectError(await api('GET', `/flows/${flowId}/versions/0`, undefined, {}), 401);
        expectError(await api('GET', `/flows/${flowId}/versions/0`, undefined, editOnly), 403, 'FORBIDDEN');
        expect(ok(await api('GET', `/flows/${flowId}/versions/0`, undefined, viewOnly)).body.version).to.equal(0);
        expectError(await api('GET', `/flows/${randomUUID()}/versions/0`), 404, 'FLOW_NOT_FOUND');
      });
    });

    it("tenant isolation: another user gets 404 on every audit route with the owner's ids", async () => {
      const { flowId } = await editedFlow();
      for (const path of [`/flows/${flowId}/events`, `/flows/${flowId}/events?order=asc&cursor=0`, `/flows/${flowId}/versions/0`, `/flows/${flowId}/versions/6`, `/flows/${flowId}/versions/99`]) {
        expectError(await api('GET', path, undefined, other.auth), 404, 'FLOW_NOT_FOUND');
      }
    });
  });
}
