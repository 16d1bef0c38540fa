/**
 * Node secrets (domain/flows/secrets.ts): sealed by the command layer, kept when a mask comes
 * back, refused in clear by the decider, masked in every view and in the read model, sealed on
 * read when older events hold them in clear (the upcasters).
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { sealFlowCommand } from '../../commands/flows.js';
import {
  flowDecider,
  flowStreamId,
  foldFlow,
  isSealedSecret,
  maskFlowEventSecrets,
  maskSecret,
  openSecret,
  openSecretVariables,
  sealNodeSecrets,
  sealSecret,
  toFlowView,
  validateNode,
  type FlowCommand,
  type FlowEvent,
  type FlowNode,
} from '../../domain/flows/index.js';
import { flowSecretUpcasters } from '../../domain/flows/upcasters.js';
import { upcast } from '../../domain/shared/upcasting.js';
import { resealFlowSecrets } from '../../commands/flows-secrets.js';
import { SealedBox } from '../../infra/auth/sealed-box.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { appendOnlyStoredEvents, sqliteStoredEvents } from '../../infra/event-store/stored-events.js';
import { UpcastingEventStore } from '../../infra/event-store/upcasting.js';
import { FLOWS } from '../../projections/flows.js';
import { flowProjectors, getFlow, getFlowJson } from '../../projections/flows.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const box = new SealedBox(randomBytes(32));
const seal = (plaintext: string) => box.seal(plaintext);
const open = (sealed: string) => box.open(sealed);
const spec = deciderSpec(flowDecider);
const at = '2026-03-01T00:00:00.000Z';
const TOKEN = 'Bearer tok_live_0123456789abcdef';
const scope = { userId: 'u1', orgId: null, workspaceId: null };

const webhookData = (headers: Record<string, string>, variables: Record<string, unknown> = {}) => ({
  nodeType: 'webhook',
  webhookConfig: { url: 'https://hooks.example.com/x', method: 'POST', headers },
  variables,
});
const node = (id: string, data: Record<string, unknown>): FlowNode => ({ id, type: 'custom', position: { x: 0, y: 0 }, data });
const created: FlowEvent = {
  type: 'FlowCreated',
  data: { flowId: 'f1', name: 'Flow', description: '', ownerId: 'u1', orgId: null, workspaceId: null, nodes: [], edges: [], createdAt: at },
};
const sealedToken = sealSecret(TOKEN, seal);
const addedWebhook: FlowEvent = { type: 'NodeAdded', data: { node: node('w', webhookData({ Authorization: sealedToken, 'X-Team': sealSecret('ops', seal) }, { key: { $secret: sealSecret('k-0123456789xyz', seal) } })), duplicatedFrom: null, at } };

describe('node secrets: values', () => {
  it('seals with a hint, opens, and masks: the last 4 characters from 12 characters on, none below', () => {
    expect(isSealedSecret(sealedToken)).to.equal(true);
    expect(sealedToken).to.not.include('tok_live');
    expect(openSecret(sealedToken, open)).to.equal(TOKEN);
    expect(maskSecret(sealedToken)).to.equal('••••cdef');
    expect(maskSecret(sealSecret('short', seal))).to.equal('••••');
    expect(maskSecret(TOKEN), 'a value stored in clear masks the same').to.equal('••••cdef');
    expect(maskSecret('••••cdef'), 'a mask stays a mask').to.equal('••••cdef');
    expect(openSecret('plain', open), 'a clear value (older events) is used as it is').to.equal('plain');
  });

  it('seals every header value and every {"$secret"} variable (nested too), and nothing else; masks stay masks', () => {
    const data = webhookData({ Authorization: TOKEN, 'X-Keep': '••••cdef' }, { plain: 'visible', deep: { api: { $secret: 'sk-abcdefghijkl' } }, list: [{ $secret: 'x' }] });
    const sealed = sealNodeSecrets(data, seal);
    expect(isSealedSecret(sealed.webhookConfig.headers.Authorization)).to.equal(true);
    expect(sealed.webhookConfig.headers['X-Keep']).to.equal('••••cdef');
    expect(sealed.variables.plain).to.equal('visible');
    expect(isSealedSecret((sealed.variables.deep as { api: { $secret: string } }).api.$secret)).to.equal(true);
    expect(isSealedSecret((sealed.variables.list as Array<{ $secret: string }>)[0].$secret)).to.equal(true);
    expect(JSON.stringify(sealed)).to.not.include('sk-abcdefghijkl');
    expect(data.webhookConfig.headers.Authorization, 'the input is not changed').to.equal(TOKEN);
    expect(openSecretVariables(sealed.variables, open)).to.deep.equal({ plain: 'visible', deep: { api: 'sk-abcdefghijkl' }, list: ['x'] });
  });

  it('a secret variable is exactly {"$secret": "<text>"}', () => {
    const problems = validateNode({ type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'x', variables: { a: { $secret: 1 } } } }, { nodeIds: [] });
    expect(problems.map((p) => p.field)).to.include('data.variables');
    const extra = validateNode({ type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'x', variables: { a: { $secret: 'x', b: 1 } } } }, { nodeIds: [] });
    expect(extra.map((p) => p.field)).to.include('data.variables');
  });

  it('the command layer seals what a client sends in every write that carries node data', () => {
    const commands: Array<Extract<FlowCommand, { type: 'CreateFlow' | 'ReplaceFlow' | 'AddNode' | 'UpdateNode' }>> = [
      { type: 'CreateFlow', flowId: 'f', name: 'n', ownerId: 'u', orgId: null, workspaceId: null, nodes: [{ ...node('w', webhookData({ Authorization: TOKEN })) }], edges: [], at },
      { type: 'ReplaceFlow', name: 'n', nodes: [{ ...node('w', webhookData({ Authorization: TOKEN })) }], edges: [], at },
      { type: 'AddNode', nodeId: 'w', node: { type: 'custom', position: { x: 0, y: 0 }, data: webhookData({ Authorization: TOKEN }) }, at },
      { type: 'UpdateNode', nodeId: 'w', patch: { data: webhookData({ Authorization: TOKEN }) }, at },
    ];
    for (const command of commands) {
      const sealed = sealFlowCommand(command, box);
      expect(JSON.stringify(sealed), command.type).to.not.include('tok_live');
      expect(JSON.stringify(sealed), command.type).to.include('sealed:');
    }
  });
});

describe('node secrets: the decider', () => {
  it('stores sealed values as given, and refuses a value in clear (a writer skipped the sealing)', () => {
    const data = webhookData({ Authorization: sealedToken });
    const [event] = spec.given([created]).when({ type: 'AddNode', nodeId: 'w', node: { type: 'custom', position: { x: 0, y: 0 }, data }, at }).events();
    expect((event as Extract<FlowEvent, { type: 'NodeAdded' }>).data.node.data.webhookConfig!.headers!.Authorization).to.equal(sealedToken);
    const err = spec.given([created]).when({ type: 'AddNode', nodeId: 'w', node: { type: 'custom', position: { x: 0, y: 0 }, data: webhookData({ Authorization: TOKEN }) }, at }).thenThrows('SECRET_NOT_SEALED', 'internal');
    expect(err.message).to.not.include('tok_live');
  });

  it('a mask sent back keeps the stored secret: no change on a node update, the same sealed value on a replace', () => {
    const masked = { Authorization: '••••cdef', 'X-Team': '••••' };
    const back = { key: { $secret: '••••9xyz' } };
    spec.given([created, addedWebhook]).when({ type: 'UpdateNode', nodeId: 'w', patch: { data: webhookData(masked, back) }, scope, at }).then([]);
    const [replaced] = spec
      .given([created, addedWebhook])
      .when({ type: 'ReplaceFlow', name: 'Flow', nodes: [node('w', webhookData(masked, back))], edges: [], scope, at })
      .events();
    expect(replaced.type).to.equal('FlowReplaced');
    const stored = (replaced as Extract<FlowEvent, { type: 'FlowReplaced' }>).data.nodes[0].data;
    expect(stored.webhookConfig!.headers!.Authorization).to.equal(sealedToken);
    const storedKey = (addedWebhook as Extract<FlowEvent, { type: 'NodeAdded' }>).data.node.data.variables!.key as { $secret: string };
    expect((stored.variables!.key as { $secret: string }).$secret).to.equal(storedKey.$secret);
  });

  it('a mask with nothing stored behind it, or another mask, is a field problem', () => {
    const err = spec
      .given([created, addedWebhook])
      .when({ type: 'UpdateNode', nodeId: 'w', patch: { data: webhookData({ Authorization: '••••zzzz', 'X-New': '••••' }) }, scope, at })
      .thenThrows('VALIDATION_FAILED', 'invalid');
    const fields = (err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
    expect(fields).to.deep.equal(['body.data.webhookConfig.headers.Authorization', 'body.data.webhookConfig.headers.X-New']);
    spec
      .given([created])
      .when({ type: 'AddNode', nodeId: 'w', node: { type: 'custom', position: { x: 0, y: 0 }, data: webhookData({ Authorization: '••••cdef' }) }, at })
      .thenThrows('VALIDATION_FAILED', 'invalid');
  });

  it('ResealFlowSecrets records the sealed fields (also for a deleted flow), refusing clear ones', () => {
    const data = { webhookConfig: { url: 'https://hooks.example.com/x', headers: { Authorization: sealedToken } } };
    const deleted: FlowEvent = { type: 'FlowDeleted', data: { at } };
    spec
      .given([created, addedWebhook, deleted])
      .when({ type: 'ResealFlowSecrets', nodes: [{ nodeId: 'w', data }], clearEvents: 2, rewrittenInPlace: true, at })
      .then([{ type: 'FlowSecretsResealed', data: { nodes: [{ nodeId: 'w', data }], clearEvents: 2, rewrittenInPlace: true, at } }]);
    spec
      .given([created, addedWebhook])
      .when({ type: 'ResealFlowSecrets', nodes: [{ nodeId: 'w', data: { webhookConfig: { headers: { Authorization: TOKEN } } } }], clearEvents: 1, rewrittenInPlace: false, at })
      .thenThrows('SECRET_NOT_SEALED', 'internal');
    spec.given([]).when({ type: 'ResealFlowSecrets', nodes: [], clearEvents: 1, rewrittenInPlace: false, at }).thenThrows('FLOW_NOT_FOUND', 'not_found');
  });

  it('every view masks: the flow view, and the events as the audit shows them', () => {
    const view = toFlowView(foldFlow([created, addedWebhook]));
    expect(view.nodes[0].data.webhookConfig!.headers).to.deep.equal({ Authorization: '••••cdef', 'X-Team': '••••' });
    expect(view.nodes[0].data.variables).to.deep.equal({ key: { $secret: '••••9xyz' } });
    const audit = JSON.stringify(maskFlowEventSecrets(addedWebhook.type, addedWebhook.data));
    expect(audit).to.not.include('sealed:');
    expect(audit).to.include('••••cdef');
  });
});

describe('node secrets: events written in clear', () => {
  const clearNode = node('w', webhookData({ Authorization: TOKEN }, { key: { $secret: 'k-0123456789xyz' } }));
  const clearCreated = { ...created, data: { ...created.data, nodes: [clearNode] } } as FlowEvent;

  it('are read sealed (schema version 2); sealed events pass unchanged', () => {
    const upcasters = flowSecretUpcasters(seal);
    const read = upcast(upcasters, 'FlowCreated', 1, clearCreated.data);
    expect(read.version).to.equal(2);
    expect(JSON.stringify(read.data)).to.not.include('tok_live').and.not.include('k-0123456789xyz');
    const headers = (read.data as { nodes: FlowNode[] }).nodes[0].data.webhookConfig!.headers!;
    expect(openSecret(headers.Authorization, open)).to.equal(TOKEN);
    const already = upcast(upcasters, 'NodeAdded', 1, addedWebhook.data);
    expect(already.data).to.deep.equal(addedWebhook.data);
    expect(upcast(upcasters, 'FlowRenamed', 1, { name: 'x' }).data).to.deep.equal({ name: 'x' });
    // A run's snapshot of the nodes (RunRequested) too.
    const run = upcast(upcasters, 'RunRequested', 1, { processId: 'p', definition: { nodes: [{ id: 'w', data: clearNode.data }], edges: [] } });
    expect(JSON.stringify(run.data)).to.not.include('tok_live');
    expect(JSON.stringify(run.data)).to.include('sealed:');
    expect(JSON.stringify(maskFlowEventSecrets('RunRequested', run.data))).to.not.include('sealed:');
    expect(JSON.stringify(maskFlowEventSecrets('RunRequested', run.data))).to.include('••••cdef');
  });

  for (const store of ['sqlite (re-writes in place)', 'append-only (EventStoreDB)']) {
    it(`the reseal on ${store}: one FlowSecretsResealed per affected flow, nothing new the second time`, async () => {
      const raw = new SqliteEventStore(':memory:');
      const eventStore = new UpcastingEventStore(raw, flowSecretUpcasters(seal));
      const storedEvents = store.startsWith('sqlite') ? sqliteStoredEvents(raw) : appendOnlyStoredEvents(raw);
      const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at };
      const legacy = [clearCreated, { type: 'FlowRenamed', data: { name: 'x', previousName: 'Flow', at } }];
      await raw.append(flowStreamId('f1'), legacy.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })), 'no_stream');
      await raw.append(flowStreamId('f2'), [{ id: randomUUID(), type: 'FlowCreated', data: { ...created.data, flowId: 'f2' }, metadata }], 'no_stream');
      const context = { ...metadata, now: new Date(at) };
      const ports = { eventStore, storedEvents, sealer: box };

      const first = await resealFlowSecrets(ports, context);
      expect(first.flows.map((f) => ({ ...f }))).to.deep.equal([{ flowId: 'f1', clearEvents: 1, rewrittenEvents: storedEvents.rewrite ? 1 : 0, revision: 2 }]);
      const [, , resealed] = await raw.readStream(flowStreamId('f1'));
      expect(resealed.type).to.equal('FlowSecretsResealed');
      expect(JSON.stringify(resealed.data)).to.not.include('tok_live');
      expect(JSON.stringify(resealed.data)).to.include('sealed:');
      const storedText = JSON.stringify(await storedEvents.read({ maxCount: 100, categories: ['flow'] }));
      expect(storedText.includes('tok_live'), 'clear values left in the stored log').to.equal(storedEvents.rewrite === null);
      const state = foldFlow(await eventStore.readStream(flowStreamId('f1')));
      expect(openSecret(state.nodes[0].data.webhookConfig!.headers!.Authorization, open)).to.equal(TOKEN);

      const second = await resealFlowSecrets(ports, context);
      expect(second.flows).to.deep.equal([]);
      expect((await raw.readStream(flowStreamId('f1'))).length).to.equal(3);
      await eventStore.close();
    });
  }

  it('the read model stores only masks, whether the events were sealed or (older ones) in clear', async () => {
    const streamId = flowStreamId('f1');
    await projectionSpec(flowProjectors)
      .given([{ streamId, event: clearCreated }, { streamId, event: { ...addedWebhook, data: { ...addedWebhook.data, node: node('w2', (addedWebhook as Extract<FlowEvent, { type: 'NodeAdded' }>).data.node.data) } } }])
      .then(async (store) => {
        const docs = JSON.stringify(await store.collection(FLOWS).find({}, { limit: 10 }));
        expect(docs).to.not.include('tok_live').and.not.include('k-0123456789xyz').and.not.include('sealed:');
        const flow = await getFlow(store, 'f1', scope);
        expect(flow!.nodes.map((n) => n.data.webhookConfig!.headers!.Authorization)).to.deep.equal(['••••cdef', '••••cdef']);
        expect(JSON.parse((await getFlowJson(store, 'f1', scope))!.json).nodes[1].data.variables).to.deep.equal({ key: { $secret: '••••9xyz' } });
      });
  });

  it('a read-model document projected in clear by an older version is masked when read', async () => {
    await projectionSpec(flowProjectors)
      .given([{ streamId: flowStreamId('f1'), event: created }])
      .then(async (store) => {
        const flows = store.collection<{ _id: string; definition: string; secretsMasked?: true }>(FLOWS);
        const doc = (await flows.findOne({ _id: 'f1' }))!;
        const { secretsMasked: _masked, ...old } = doc;
        await flows.replaceOne({ _id: 'f1' }, { ...old, definition: JSON.stringify({ ...JSON.parse(doc.definition), nodes: [clearNode] }) });
        expect((await getFlowJson(store, 'f1', scope))!.json).to.not.include('tok_live');
        expect((await getFlow(store, 'f1', scope))!.nodes[0].data.webhookConfig!.headers!.Authorization).to.equal('••••cdef');
        // Put back what the projection wrote, so the redelivery check starts from a projected document.
        await flows.replaceOne({ _id: 'f1' }, doc);
      });
  });
});
