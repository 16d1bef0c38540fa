import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type Koa from 'koa';
import { executeFlowCommand } from '../../commands/flows.js';
import type { CommandContext } from '../../commands/handle.js';
import { flowStreamId } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { errorBody } from '../../api/errors.js';
import { TRIGGER_KEY_PREFIX, generateTriggerKey, presentedTriggerKey, requireTriggerKey, verifyTriggerKey } from '../../api/middleware/trigger-key.js';
import { sha256 } from '../../commands/users-credentials.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { httpStatusOf } from '../../api/errors.js';

/** The trigger-key check against a real embedded store, fed through the flow commands and projection. */
describe('trigger key check (verifyTriggerKey)', function () {
  this.timeout(30_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService('embedded');
  });
  after(async () => svc?.stop());

  const context = (): CommandContext => ({
    actorId: 'u1',
    orgId: null,
    workspaceId: null,
    correlationId: randomUUID(),
    causationId: null,
    requestId: null,
    now: new Date(),
  });

  /** Runs a flow command and waits until the read models have it, as the routes do. */
  async function run(flowId: string, command: Parameters<typeof executeFlowCommand>[3]) {
    const result = await executeFlowCommand(svc.services.eventStore, context(), flowId, command);
    if (result.position !== null) expect(await svc.services.projections.waitFor(result.position, flowStreamId(flowId), 10_000)).to.equal(true);
    return result;
  }

  async function newFlow(options: { enabled?: boolean; nodeId?: string } = {}) {
    const flowId = randomUUID();
    const nodes = options.nodeId ? [{ id: options.nodeId, type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform' as const, template: 'x' } }] : [];
    await run(flowId, { type: 'CreateFlow', flowId, name: 'Triggered', ownerId: 'u1', orgId: null, workspaceId: null, nodes, edges: [] });
    const { key, keyHash } = generateTriggerKey();
    await run(flowId, { type: 'RegenerateFlowTriggerKey', keyHash });
    if (options.enabled !== false) await run(flowId, { type: 'UpdateFlowTrigger', enabled: true, allowedMethods: ['POST', 'PUT'] });
    return { flowId, key };
  }

  /** The error a call rejects with, as the error handler would answer it. */
  async function refusal(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      const e = err as DomainError;
      return { status: httpStatusOf(e), body: errorBody(e.code, e.message, e.details) };
    }
    return expect.fail('expected a refusal');
  }

  it('generates prefixed high-entropy keys and hashes them with sha256', () => {
    const a = generateTriggerKey();
    const b = generateTriggerKey();
    expect(a.key).to.match(new RegExp(`^${TRIGGER_KEY_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(a.key).to.not.equal(b.key);
    expect(a.keyHash).to.equal(sha256(a.key));
  });

  it('accepts the right key for an enabled trigger and returns the flow and its settings', async () => {
    const { flowId, key } = await newFlow();
    const verified = await verifyTriggerKey(svc.services, flowId, null, key, 'post');
    expect(verified.flow.id).to.equal(flowId);
    expect(verified.nodeId).to.equal(null);
    expect(verified.trigger).to.include({ enabled: true });
    expect(verified.trigger.allowedMethods).to.deep.equal(['POST', 'PUT']);
  });

  it('refuses a missing or wrong key with 401 INVALID_TRIGGER_KEY', async () => {
    const { flowId, key } = await newFlow();
    for (const presented of [undefined, '', `${key}x`, key.slice(0, -1), generateTriggerKey().key]) {
      const r = await refusal(verifyTriggerKey(svc.services, flowId, null, presented, 'POST'));
      expect(r.status, String(presented)).to.equal(401);
      expect(r.body.error.code).to.equal('INVALID_TRIGGER_KEY');
    }
  });

  it('answers an unknown flow exactly like a wrong key (same status and body), so existence does not leak', async () => {
    const { flowId } = await newFlow();
    const wrongKey = await refusal(verifyTriggerKey(svc.services, flowId, null, generateTriggerKey().key, 'POST'));
    const unknownFlow = await refusal(verifyTriggerKey(svc.services, randomUUID(), null, generateTriggerKey().key, 'POST'));
    const noKeyYet = await refusal(verifyTriggerKey(svc.services, (await newNoKeyFlow()).flowId, null, generateTriggerKey().key, 'POST'));
    expect(unknownFlow).to.deep.equal(wrongKey);
    expect(noKeyYet).to.deep.equal(wrongKey);
  });

  async function newNoKeyFlow() {
    const flowId = randomUUID();
    await run(flowId, { type: 'CreateFlow', flowId, name: 'No key', ownerId: 'u1', orgId: null, workspaceId: null });
    await run(flowId, { type: 'UpdateFlowTrigger', enabled: true });
    return { flowId };
  }

  it('does not let an empty key match a trigger that has no key', async () => {
    const { flowId } = await newNoKeyFlow();
    for (const presented of [undefined, '']) {
      expect((await refusal(verifyTriggerKey(svc.services, flowId, null, presented))).status).to.equal(401);
    }
  });

  it('refuses a disabled trigger with 403 TRIGGER_DISABLED, but only to the holder of the key', async () => {
    const { flowId, key } = await newFlow({ enabled: false });
    const disabled = await refusal(verifyTriggerKey(svc.services, flowId, null, key, 'POST'));
    expect(disabled.status).to.equal(403);
    expect(disabled.body.error.code).to.equal('TRIGGER_DISABLED');
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, 'ftk_wrong', 'POST'))).status).to.equal(401);
  });

  it('refuses a method the trigger does not allow with 405 naming the allowed ones', async () => {
    const { flowId, key } = await newFlow();
    const r = await refusal(verifyTriggerKey(svc.services, flowId, null, key, 'DELETE'));
    expect(r.status).to.equal(405);
    expect(r.body.error.code).to.equal('TRIGGER_METHOD_NOT_ALLOWED');
    expect(r.body.error.details).to.deep.equal({ allowedMethods: ['POST', 'PUT'] });
    // Without a method (a caller that checks it elsewhere) the key alone is verified.
    expect((await verifyTriggerKey(svc.services, flowId, null, key)).flow.id).to.equal(flowId);
  });

  it('stops the old key at once when the key is regenerated', async () => {
    const { flowId, key: oldKey } = await newFlow();
    const { key: newKey, keyHash } = generateTriggerKey();
    await run(flowId, { type: 'RegenerateFlowTriggerKey', keyHash });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, oldKey, 'POST'))).status).to.equal(401);
    expect((await verifyTriggerKey(svc.services, flowId, null, newKey, 'POST')).flow.id).to.equal(flowId);
  });

  it('checks the key on the log, not the read model: a regenerated key works and the old one stops before any projection ran', async () => {
    const { flowId, key: oldKey } = await newFlow({ nodeId: 'n1' });
    const { key: newKey, keyHash } = generateTriggerKey();
    // Appended without waiting for the read models.
    await executeFlowCommand(svc.services.eventStore, context(), flowId, { type: 'RegenerateFlowTriggerKey', keyHash });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, oldKey, 'POST'))).status).to.equal(401);
    const verified = await verifyTriggerKey(svc.services, flowId, null, newKey, 'POST');
    expect(verified.flow.id).to.equal(flowId);
    expect(verified.flow.trigger.keyHash).to.equal(keyHash);
    expect(verified.trigger, 'the settings answered never carry the key hash').to.deep.equal({ enabled: true, allowedMethods: ['POST', 'PUT'], inputSchema: null });
    const node = generateTriggerKey();
    await executeFlowCommand(svc.services.eventStore, context(), flowId, { type: 'RegenerateNodeTriggerKey', nodeId: 'n1', keyHash: node.keyHash });
    await executeFlowCommand(svc.services.eventStore, context(), flowId, { type: 'UpdateNodeTrigger', nodeId: 'n1', enabled: true });
    expect((await verifyTriggerKey(svc.services, flowId, 'n1', node.key, 'POST')).nodeId).to.equal('n1');
    await executeFlowCommand(svc.services.eventStore, context(), flowId, { type: 'DeleteNode', nodeId: 'n1' });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, 'n1', node.key, 'POST'))).status, "a deleted node's key").to.equal(401);
    await executeFlowCommand(svc.services.eventStore, context(), flowId, { type: 'DeleteFlow' });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, newKey, 'POST'))).status, "a deleted flow's key").to.equal(401);
  });

  it('keeps flow and node keys apart', async () => {
    const { flowId, key: flowKey } = await newFlow({ nodeId: 'n1' });
    const { key: nodeKey, keyHash } = generateTriggerKey();
    await run(flowId, { type: 'RegenerateNodeTriggerKey', nodeId: 'n1', keyHash });
    // The node trigger is off until configured.
    expect((await refusal(verifyTriggerKey(svc.services, flowId, 'n1', nodeKey, 'POST'))).body.error.code).to.equal('TRIGGER_DISABLED');
    await run(flowId, { type: 'UpdateNodeTrigger', nodeId: 'n1', enabled: true });
    const verified = await verifyTriggerKey(svc.services, flowId, 'n1', nodeKey, 'POST');
    expect(verified.nodeId).to.equal('n1');
    expect(verified.trigger.allowedMethods).to.deep.equal(['POST']);
    expect((await refusal(verifyTriggerKey(svc.services, flowId, 'n1', flowKey, 'POST'))).status).to.equal(401);
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, nodeKey, 'POST'))).status).to.equal(401);
    expect((await refusal(verifyTriggerKey(svc.services, flowId, 'n2', nodeKey, 'POST'))).status).to.equal(401);
  });

  it('refuses the key of a deleted flow or node', async () => {
    const { flowId, key } = await newFlow({ nodeId: 'n1' });
    const { key: nodeKey, keyHash } = generateTriggerKey();
    await run(flowId, { type: 'RegenerateNodeTriggerKey', nodeId: 'n1', keyHash });
    await run(flowId, { type: 'UpdateNodeTrigger', nodeId: 'n1', enabled: true });
    await run(flowId, { type: 'DeleteNode', nodeId: 'n1' });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, 'n1', nodeKey, 'POST'))).status).to.be.oneOf([401, 404]);
    await run(flowId, { type: 'DeleteFlow' });
    expect((await refusal(verifyTriggerKey(svc.services, flowId, null, key, 'POST'))).status).to.be.oneOf([401, 404]);
  });

  describe('Koa helpers', () => {
    const fakeCtx = (headers: Record<string, string>, method: string) => {
      const set: Record<string, string> = {};
      const ctx = { method, get: (name: string) => headers[name.toLowerCase()] ?? '', set: (k: string, v: string) => (set[k] = v) };
      return { ctx: ctx as unknown as Koa.Context, set };
    };

    it('reads the key from X-Trigger-Key only', () => {
      expect(presentedTriggerKey(fakeCtx({ 'x-trigger-key': 'ftk_abc' }, 'POST').ctx)).to.equal('ftk_abc');
      expect(presentedTriggerKey(fakeCtx({ authorization: 'Bearer ftk_abc' }, 'POST').ctx)).to.equal(undefined);
    });

    it('verifies the request method and sets Allow on a 405', async () => {
      const { flowId, key } = await newFlow();
      const ok = fakeCtx({ 'x-trigger-key': key }, 'PUT');
      expect((await requireTriggerKey(svc.services, ok.ctx, flowId, null)).flow.id).to.equal(flowId);
      const wrong = fakeCtx({ 'x-trigger-key': key }, 'GET');
      expect((await refusal(requireTriggerKey(svc.services, wrong.ctx, flowId, null))).status).to.equal(405);
      expect(wrong.set.Allow).to.equal('POST, PUT');
    });
  });
});
