import { expect } from 'chai';
import { APP_INSTANCE_TYPES, type AppInstanceEvent } from '../../domain/app-instances/index.js';
import { APP_INSTANCES, appInstancesProjector, getAppInstance, pageAppInstances, type AppInstanceDoc } from '../../projections/app-instances.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const createdEvent = (instanceId: string, over: Record<string, unknown> = {}): AppInstanceEvent => ({
  type: 'AppInstanceCreated',
  data: { instanceId, type: 'kanban', name: `Board ${instanceId}`, appId: null, ownerId: 'u1', orgId: null, workspaceId: null, data: APP_INSTANCE_TYPES.kanban.initialData(), linkedFlowIds: [], createdBy: 'u1', at, ...over } as never,
});

describe('app instances: projection', () => {
  it('folds patches, files and messages into one document (data as JSON text: dotted and $ keys survive), on every read store and after a redelivery', async () => {
    const card = { id: 'c1', title: 'Write docs', status: 'todo', labels: [], assignee: null, due: null, order: 10, metadata: { 'a.b': 1, $x: 2 } };
    await projectionSpec([appInstancesProjector])
      .given([
        { streamId: 'appinstance-i1', event: createdEvent('i1') },
        { streamId: 'appinstance-i1', event: { type: 'AppInstanceDataPatched', data: { format: 'json-patch', ops: [{ op: 'add', path: '/cards/0', value: card }], by: 'u1', at } } },
        { streamId: 'appinstance-i1', event: { type: 'AppInstanceDataPatched', data: { format: 'merge-patch', ops: [{ op: 'replace', path: '/cards/0/status', value: 'done' }], by: 'u1', at: '2026-01-02T00:00:00.000Z' } } },
        { streamId: 'appinstance-i1', event: { type: 'AppInstanceFileAdded', data: { path: 'a.txt', key: 'k', size: 1, contentType: 'text/plain', sha256: 's', uploadedBy: 'u1', at } } },
        { streamId: 'appinstance-i1', event: { type: 'AppInstanceMessageAdded', data: { messageId: 'm1', role: 'user', content: 'hi', by: 'u1', at } } },
        { streamId: 'appinstance-i2', event: createdEvent('i2', { type: 'job_tracker', data: { applications: [] }, orgId: 'o1', workspaceId: 'w1' }) },
        { streamId: 'appinstance-i3', event: createdEvent('i3') },
        { streamId: 'appinstance-i3', event: { type: 'AppInstanceDeleted', data: { by: 'u1', at } } },
      ])
      .then(async (store) => {
        const docs = await store.collection<AppInstanceDoc>(APP_INSTANCES).find({}, { sort: { _id: 1 } });
        expect(docs.map((d) => d._id)).to.deep.equal(['i1', 'i2']);
        expect(docs[0]).to.deep.include({ type: 'kanban', fileCount: 1, messageCount: 1, version: 4, updatedAt: at });
        const i1 = await getAppInstance(store, 'i1', { userId: 'u1', orgId: null, workspaceId: null });
        expect(i1!.data.cards).to.deep.equal([{ ...card, status: 'done' }]);
        expect(i1!.conversation.map((m) => m.content)).to.deep.equal(['hi']);
        expect(await getAppInstance(store, 'i1', { userId: 'u2', orgId: null, workspaceId: null }), 'another user').to.equal(null);
        expect(await getAppInstance(store, 'i2', { userId: 'u1', orgId: null, workspaceId: null }), 'another tenant').to.equal(null);
        expect(await getAppInstance(store, 'i2', { userId: 'u9', orgId: 'o1', workspaceId: 'w1' }), 'a member of the org').to.not.equal(null);
        const page = await pageAppInstances(store, { userId: 'u1', orgId: null, workspaceId: null }, { limit: 10 });
        expect(page.items.map((d) => d._id)).to.deep.equal(['i1']);
        expect(page.items[0]).to.not.have.property('state');
        const jobs = await pageAppInstances(store, { userId: 'u9', orgId: 'o1', workspaceId: 'w1' }, { type: 'kanban', limit: 10 });
        expect(jobs.items).to.deep.equal([]);
      });
  });
});
