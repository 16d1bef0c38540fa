import { expect } from 'chai';
import { integrationPublisher } from '../../consumers/integration.js';
import { MemoryIntegrationPublisher } from '../../infra/integration/memory.js';
import type { RecordedEvent } from '../../domain/shared/events.js';

const meta = { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: '2026-01-01T00:00:00.000Z' };
const ev = (streamId: string, revision: number, type: string, data: Record<string, unknown>): RecordedEvent => ({ id: `${streamId}/${revision}`, type, streamId, revision, position: revision, schemaVersion: 1, data, metadata: meta });

describe('the integration-events consumer', () => {
  it('finds a stream\'s tenant from its first event (a document\'s from its collection), once, and publishes in order', async () => {
    const streams: Record<string, RecordedEvent[]> = {
      'run-p1': [ev('run-p1', 0, 'RunRequested', { processId: 'p1', flowId: 'f1', flowVersion: 1, ownerId: 'u1', orgId: 'o1', workspaceId: null, mode: 'flow', nodeId: null, source: 'api', at: 'a' })],
      'msgdelivery-dl1': [ev('msgdelivery-dl1', 0, 'WebhookDeliveryScheduled', { deliveryId: 'dl1', sessionId: 's1', webhookId: 'wh1', eventType: 'message', body: '{"token":"x"}', at: 'a' })],
      'msgsession-s1': [ev('msgsession-s1', 0, 'MessagingSessionInitialized', { sessionId: 's1', name: 'n', provider: 'embedded', ownerId: 'u3', orgId: 'o3', workspaceId: null, at: 'a' })],
      'collection-c1': [ev('collection-c1', 0, 'CollectionCreated', { collectionId: 'c1', name: 'people', ownerId: 'u2', orgId: null, workspaceId: null, createdAt: 'a' })],
    };
    const reads: string[] = [];
    const publisher = new MemoryIntegrationPublisher();
    const consumer = integrationPublisher({
      publisher,
      eventStore: { readStream: async (id) => (reads.push(id), streams[id] ?? []) },
    });
    expect(consumer.categories).to.include.members(['flow', 'run', 'workflow', 'collection', 'document', 'msgdelivery']);
    await consumer.handle(ev('run-p1', 1, 'RunStarted', { workerId: 'w', at: 'b' }));
    await consumer.handle(ev('run-p1', 2, 'RunCompleted', { outputs: { x: 1 }, outputsTruncated: false, usage: { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 }, at: 'c' }));
    await consumer.handle(ev('document-c1.d1', 0, 'DocumentAdded', { collectionId: 'c1', documentId: 'd1', document: { secret: 'x' }, size: 14, revision: 1, legacyRevision: null, at: 'd' }));
    await consumer.handle(ev('msgdelivery-dl1', 1, 'WebhookDeliveryAttempted', { attempt: 1, statusCode: 200, error: null, durationMs: 3, outcome: 'succeeded', nextAttemptAt: null, at: 'f' }));
    await consumer.handle(ev('user-u1', 0, 'UserRegistered', { passwordHash: 'scrypt$x' }));
    await consumer.handle(ev('run-p9', 3, 'RunStarted', { workerId: 'w', at: 'e' }));
    expect(reads, 'each origin read once; nothing read for a user event').to.deep.equal(['run-p1', 'collection-c1', 'msgdelivery-dl1', 'msgsession-s1', 'run-p9']);
    expect(publisher.published.map((e) => [e.type, e.tenant, e.subject])).to.deep.equal([
      ['flowsvc.run.started.v1', 'org.o1', 'runs/p1'],
      ['flowsvc.run.completed.v1', 'org.o1', 'runs/p1'],
      ['flowsvc.document.changed.v1', 'user.u2', 'documents/c1/d1'],
      ['flowsvc.webhook.delivery_completed.v1', 'org.o3', 'webhook-deliveries/dl1'],
    ]);
    expect(publisher.published.at(-1)!.data).to.deep.include({ sessionId: 's1', webhookId: 'wh1', eventType: 'message', outcome: 'succeeded', attempts: 1 });
  });
});
