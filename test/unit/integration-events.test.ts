import { expect } from 'chai';
import { z } from 'zod';
import { FORBIDDEN_FIELD, INTEGRATION_EVENT_TYPES, integrationEventSchemas, MAX_INLINE_BYTES } from '../../domain/integration/events.js';
import { originOf, originStreamOf, tenantOf, toIntegrationEvents, type StreamOrigin } from '../../domain/integration/map.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { userEventSchemas } from '../../domain/users/events.js';
import { flowEventSchemas } from '../../domain/flows/events.js';
import { runEventSchemas } from '../../domain/runs/events.js';
import { workflowEventSchemas } from '../../domain/workflows/events.js';
import { orgEventSchemas } from '../../domain/orgs/events.js';
import { cliTokenEventSchemas } from '../../domain/cli/events.js';
import { signInEventSchemas } from '../../domain/signins/events.js';
import { deliveryEventSchemas, webhookEventSchemas } from '../../domain/messaging-webhooks/events.js';
import { documentEventSchemas, documentStreamEventSchemas } from '../../domain/documents/events.js';

const SECRET = 'S3CRET-VALUE-never-public';
/** Every field an internal event might carry that must never go public, at the top and nested. */
const poison = {
  passwordHash: `scrypt$${SECRET}`, keyHash: SECRET, tokenHash: SECRET, secret: SECRET, apiKey: SECRET, token: SECRET, email: `${SECRET}@example.com`,
  headers: { Authorization: `Bearer ${SECRET}` }, variables: { apiKey: SECRET },
};
const plausible = {
  flowId: 'f1', name: 'a flow', ownerId: 'u1', orgId: 'o1', workspaceId: null, nodes: [{ id: 'n1', data: { webhookConfig: { headers: { authorization: SECRET } } } }], edges: [],
  processId: 'p1', flowVersion: 3, mode: 'flow', nodeId: 'n1', source: 'api', inputs: { password: SECRET }, definition: { nodes: [], edges: [] },
  output: { apiToken: SECRET }, outputs: { result: { secretValue: SECRET } }, usage: { total_tokens: 3, cost: 0.01 },
  collectionId: 'c1', documentId: 'd1', document: { password: SECRET, name: SECRET }, size: 40, update: JSON.stringify({ $set: { password: SECRET } }),
  attempt: 3, statusCode: 500, error: 'HTTP_500', outcome: 'failed', body: JSON.stringify({ token: SECRET }), url: `https://x.example/${SECRET}`,
  code: 'NODE_FAILED', reason: SECRET, execution: 1, workflowId: 'w1', at: '2026-01-01T00:00:00.000Z', createdAt: '2026-01-01T00:00:00.000Z',
};

function recorded(streamId: string, type: string, revision = 1, data: Record<string, unknown> = { ...plausible, ...poison }): RecordedEvent {
  return {
    id: `${streamId}:${revision}`, type, streamId, revision, position: revision + 1, schemaVersion: 1, data,
    metadata: { actorId: 'u1', orgId: 'o1', workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
  };
}

function keysOf(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysOf(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keysOf(v, `${path}.${k}`)]);
}

const origin: StreamOrigin = { ownerId: 'u1', orgId: 'o1', workspaceId: null, flowId: 'f1', collection: { id: 'c1', name: 'people' }, delivery: { sessionId: 's1', webhookId: 'wh1', eventType: 'message' } };
const everyInternal: Array<[string, Record<string, unknown>]> = [
  ['user', userEventSchemas], ['flow', flowEventSchemas], ['run', runEventSchemas], ['workflow', workflowEventSchemas], ['org', orgEventSchemas],
  ['clitoken', cliTokenEventSchemas], ['signin', signInEventSchemas], ['msgwebhook', webhookEventSchemas], ['msgdelivery', deliveryEventSchemas],
  ['collection', documentEventSchemas], ['document', documentStreamEventSchemas],
];

describe('public integration events (issue 32)', () => {
  it('no internal event of any type, fed secrets in every field, yields a forbidden field name or a secret value', () => {
    let published = 0;
    for (const [category, schemas] of everyInternal) {
      for (const type of Object.keys(schemas)) {
        for (const event of toIntegrationEvents(recorded(`${category}-x1`, type), origin)) {
          published++;
          const bad = keysOf(event).filter((k) => FORBIDDEN_FIELD.test(k.split('.').pop()!));
          expect(bad, `${category} ${type} → ${event.type}`).to.deep.equal([]);
          expect(JSON.stringify(event), `${category} ${type} → ${event.type}`).not.to.include(SECRET);
          const parsed = integrationEventSchemas[event.type].safeParse(event.data);
          expect(parsed.success, `${type} → ${event.type}: ${parsed.error?.message}`).to.equal(true);
        }
      }
    }
    expect(published).to.be.greaterThan(20);
  });

  it('maps nothing from user, org, sign-in, CLI-token or webhook streams, nor key or secret events of flows', () => {
    for (const [category, schemas] of everyInternal.filter(([c]) => !['flow', 'run', 'workflow', 'collection', 'document', 'msgdelivery'].includes(c))) {
      for (const type of Object.keys(schemas)) expect(toIntegrationEvents(recorded(`${category}-x1`, type), origin), type).to.deep.equal([]);
    }
    for (const type of ['FlowTriggerKeyRegenerated', 'NodeTriggerKeyRegenerated', 'FlowSecretsResealed', 'NodeExecutionRecorded']) {
      expect(toIntegrationEvents(recorded('flow-f1', type), origin), type).to.deep.equal([]);
    }
    expect(toIntegrationEvents(recorded('run-p1', 'RunCompleted'), null), 'no origin, nothing').to.deep.equal([]);
  });

  it('no public schema names a field like a password, secret, token or key hash', () => {
    for (const type of INTEGRATION_EVENT_TYPES) {
      const names = keysOf(z.toJSONSchema(integrationEventSchemas[type], { io: 'input' })).filter((k) => /\.properties\.[^.]+$/.test(k)).map((k) => k.split('.').pop()!);
      expect(names.length, type).to.be.greaterThan(0);
      expect(names.filter((n) => FORBIDDEN_FIELD.test(n)), type).to.deep.equal([]);
    }
  });

  it('names the tenant, the subject and a stable id; bounds outputs by size', () => {
    const created = recorded('run-p1', 'RunRequested', 0, { ...plausible, orgId: null, ownerId: 'user-7' });
    const own = originOf(created)!;
    expect(own).to.deep.equal({ ownerId: 'user-7', orgId: null, workspaceId: null, flowId: 'f1' });
    expect(tenantOf(own)).to.equal('user.user-7');
    expect(tenantOf(origin)).to.equal('org.o1');
    const big = { text: 'x'.repeat(MAX_INLINE_BYTES) };
    const [done] = toIntegrationEvents(recorded('run-p1', 'RunCompleted', 5, { outputs: big, outputsTruncated: false, usage: plausible.usage, at: plausible.at }), own);
    expect(done).to.include({ id: 'run-p1:5', type: 'flowsvc.run.completed.v1', subject: 'runs/p1', tenant: 'user.user-7', dataschema: '/api/asyncapi.json#/components/schemas/flowsvc.run.completed.v1' });
    expect(done!.data).to.deep.include({ processId: 'p1', flowId: 'f1' });
    expect((done!.data as { outputs: unknown }).outputs).to.deep.equal({ ref: '/processes/p1', bytes: JSON.stringify(big).length, inline: false, value: null });
    const [small] = toIntegrationEvents(recorded('run-p1', 'NodeCompleted', 4, { nodeId: 'n1', attempt: 1, output: { answer: 42 }, usage: plausible.usage, executionTime: 5, at: plausible.at }), own);
    expect((small!.data as { output: unknown }).output).to.deep.equal({ ref: '/processes/p1', bytes: 13, inline: true, value: { answer: 42 } });
    const [doc] = toIntegrationEvents(recorded('document-c1.d1', 'DocumentChanged', 2, { collectionId: 'c1', documentId: 'd1', document: { email: 'a@b.c' }, size: 17, previousSize: 3, update: null, revision: 7, legacyRevision: null, at: plausible.at }), origin);
    expect(originStreamOf('document-c1.d1')).to.equal('collection-c1');
    expect(doc).to.deep.include({ type: 'flowsvc.document.changed.v1', subject: 'documents/c1/d1', tenant: 'org.o1' });
    expect(doc!.data).to.deep.equal({ collectionId: 'c1', collection: 'people', documentId: 'd1', change: 'changed', revision: 7, bytes: 17, ref: '/db/collections/people/documents/d1', ownerId: 'u1', orgId: 'o1', workspaceId: null, at: plausible.at });
    const [delivered] = toIntegrationEvents(recorded('msgdelivery-dl1', 'WebhookDeliveryAttempted', 2, { attempt: 2, statusCode: 204, error: null, durationMs: 5, outcome: 'succeeded', nextAttemptAt: null, at: plausible.at }), origin);
    expect(delivered).to.deep.include({ type: 'flowsvc.webhook.delivery_completed.v1', subject: 'webhook-deliveries/dl1', tenant: 'org.o1' });
    expect(delivered!.data).to.deep.equal({ deliveryId: 'dl1', sessionId: 's1', webhookId: 'wh1', eventType: 'message', outcome: 'succeeded', attempts: 2, statusCode: 204, errorCode: null, ownerId: 'u1', orgId: 'o1', workspaceId: null, at: plausible.at });
    expect(toIntegrationEvents(recorded('msgdelivery-dl1', 'WebhookDeliveryAttempted', 1, { attempt: 1, statusCode: 503, error: 'HTTP_503', outcome: 'retry', at: plausible.at }), origin), 'a retry is no outcome').to.deep.equal([]);
    expect(toIntegrationEvents(recorded('run-p1', 'RunCompleted', 5), own), 'same input, same id').to.deep.equal(toIntegrationEvents(recorded('run-p1', 'RunCompleted', 5), own));
  });
});
