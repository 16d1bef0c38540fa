import { expect } from 'chai';
import { workflowsProjector, countWorkflowsByStatus, listWorkflowDurations, workflowQueries } from '../../projections/workflows.js';
import type { WorkflowEvent } from '../../domain/workflows/index.js';
import { projectionSpec } from '../support/projection-spec.js';

const t0 = '2026-03-01T00:00:00.000Z';
const created = (id: string, at = t0): WorkflowEvent => ({
  type: 'WorkflowCreated',
  data: {
    workflowId: id, execution: 1, flowId: 'f1', flowVersion: 1, ownerId: 'u1', orgId: null, workspaceId: null, createdBy: 'u1', input: null, searchAttributes: { team: 'red' },
    memo: {}, idempotencyPolicy: 'allow_duplicate', executionTimeoutMs: null, definition: { nodes: [{ id: 's', data: { nodeType: 'sleep', durationMs: 1000 } }], edges: [] }, state: {}, continuedFrom: null, at,
  },
});
const ev = (id: string, event: WorkflowEvent) => ({ streamId: `workflow-${id}`, event });

describe('workflows projection', () => {
  it('keeps one document per workflow with its status, times and pending timers; counts and durations', async () => {
    await projectionSpec([workflowsProjector])
      .given([
        ev('a', created('a')),
        ev('a', { type: 'WorkflowStarted', data: { by: 'u1', at: t0 } }),
        ev('a', { type: 'WorkflowNodeStarted', data: { nodeId: 's', attempt: 1, workerId: null, at: t0 } }),
        ev('a', { type: 'TimerScheduled', data: { timerId: 'sleep:s:1', name: 's', kind: 'sleep', fireAt: '2026-03-01T00:00:01.000Z', signal: null, nodeId: 's', at: t0 } }),
        ev('b', created('b')),
        ev('b', { type: 'WorkflowStarted', data: { by: 'u1', at: t0 } }),
        ev('b', { type: 'WorkflowCompleted', data: { result: 1, at: '2026-03-01T00:00:02.000Z' } }),
      ])
      .then(async (store) => {
        const docs = await store.collection('workflows').find({}, { sort: { _id: 1 } });
        expect(docs.map((d) => [d._id, d.status, d.historyLength, d.workerId])).to.deep.equal([
          ['a', 'RUNNING', 4, null],
          ['b', 'COMPLETED', 3, null],
        ]);
        expect(docs[1]).to.deep.include({ flowId: 'f1', ownerId: 'u1', orgId: null, workspaceId: null, createdAt: t0, startedAt: t0, closedAt: '2026-03-01T00:00:02.000Z', updatedAt: '2026-03-01T00:00:02.000Z' });
        const counts = await countWorkflowsByStatus(store);
        expect(counts).to.deep.include({ RUNNING: 1, COMPLETED: 1, FAILED: 0 });
        expect(await countWorkflowsByStatus(store, { userId: 'other', orgId: null, workspaceId: null })).to.deep.include({ RUNNING: 0 });
        const durations = await listWorkflowDurations(store, t0);
        expect(durations.map((d) => [d.workflowId, d.durationMs])).to.deep.equal([['a', null], ['b', 2000]].sort() as never);
        expect(await workflowQueries(store).dueTimers('2026-03-01T00:00:01.000Z', 10)).to.deep.equal([{ workflowId: 'a', timerId: 'sleep:s:1', fireAt: '2026-03-01T00:00:01.000Z' }]);
        expect(await workflowQueries(store).dueTimers('2026-03-01T00:00:00.500Z', 10)).to.deep.equal([]);
      });
  });
});
