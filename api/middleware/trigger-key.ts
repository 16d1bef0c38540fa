import type { Context, Middleware } from 'koa';
import { DomainError } from '../../domain/shared/decider.js';
import { flowDecider, flowNotFound, flowStreamId, nodeNotFound, nodeTriggerOf, own, type FlowState, type TriggerMethod } from '../../domain/flows/index.js';
import { loadState } from '../../commands/handle.js';
import { constantTimeEqual, randomSecret, sha256 } from '../../commands/users-credentials.js';
import type { Services } from '../../ports/services.js';

/**
 * The key check of the public trigger routes (`X-Trigger-Key`). A trigger key is a random secret
 * shown once; only its sha256 is stored (in the flow's events, and the `trigger_keys` read model).
 *
 * The key is checked against the flow as folded from its own stream (through the handler's
 * folded-state cache: one read of the events appended since), not against the read model: the log
 * is never behind it, so a regenerated key stops the old one at once, in every process. The same
 * folded flow is what the run then snapshots (startRun), so the request folds its flow once.
 *
 * Order of the answers, so that a caller without the right key learns nothing: 401 first (a
 * missing key, a wrong key and a flow or node that does not exist all give the very same body,
 * after the same work: one fold of the flow's stream, one hash, one constant-time comparison),
 * then — only for the holder of a valid key — 404 (the flow or node went away), 403 (trigger
 * disabled), 405 (method).
 */

export const TRIGGER_KEY_HEADER = 'X-Trigger-Key';
export const TRIGGER_KEY_PREFIX = 'ftk_';

/** A new key and the hash to store (RegenerateFlowTriggerKey / RegenerateNodeTriggerKey). */
export function generateTriggerKey(): { key: string; keyHash: string } {
  const key = `${TRIGGER_KEY_PREFIX}${randomSecret()}`;
  return { key, keyHash: sha256(key) };
}

// Compared against when nothing is stored, so "no such trigger" costs what "wrong key" costs.
// Module scope is safe: a hash of a random secret nobody knows, equally good for every service.
const UNMATCHABLE_HASH = sha256(`unmatchable:${randomSecret()}`);

export const invalidTriggerKey = () => new DomainError('INVALID_TRIGGER_KEY', 'missing or invalid trigger key', 'unauthenticated');

interface TriggerSettingsView {
  enabled: boolean;
  allowedMethods: TriggerMethod[];
  inputSchema: Record<string, unknown> | null;
}

export interface VerifiedTrigger {
  /** The flow as folded from its stream for this check: pass it on to startRun rather than folding it again. */
  flow: FlowState;
  /** null for the flow's own trigger. */
  nodeId: string | null;
  /** The settings of the trigger that was called (the flow's or the node's); never its key hash. */
  trigger: TriggerSettingsView;
}

/**
 * The stored key hash of the flow's (nodeId null) or the node's trigger; null when there is none:
 * no such flow, a deleted flow (its keys go with it, as in the read model), no such node, or no key
 * generated yet. A node's key leaves with the node (the fold drops its trigger).
 */
function storedKeyHash(flow: FlowState, nodeId: string | null): string | null {
  if (!flow.exists || flow.deleted) return null;
  if (nodeId === null) return flow.trigger.keyHash;
  return own(flow.nodeTriggers, nodeId)?.keyHash ?? null;
}

/**
 * Checks `presentedKey` against the flow's (nodeId null) or the node's trigger key, then that the
 * flow and node still exist, the trigger is enabled and, when `method` is given, allowed.
 */
export async function verifyTriggerKey(
  services: Pick<Services, 'eventStore'>,
  flowId: string,
  nodeId: string | null,
  presentedKey: string | undefined,
  method?: string,
): Promise<VerifiedTrigger> {
  const flow = (await loadState(services.eventStore, flowStreamId(flowId), flowDecider)).state;
  const stored = storedKeyHash(flow, nodeId);
  const matches = constantTimeEqual(sha256(presentedKey ?? ''), stored ?? UNMATCHABLE_HASH);
  if (!matches || stored === null || !presentedKey) throw invalidTriggerKey();

  if (!flow.exists || flow.deleted) throw flowNotFound();
  let settings = flow.trigger;
  if (nodeId !== null) {
    if (!flow.nodes.some((n) => n.id === nodeId)) throw nodeNotFound(nodeId);
    settings = nodeTriggerOf(flow, nodeId);
  }
  const trigger: TriggerSettingsView = { enabled: settings.enabled, allowedMethods: settings.allowedMethods, inputSchema: settings.inputSchema };
  if (!trigger.enabled) throw new DomainError('TRIGGER_DISABLED', `this ${nodeId === null ? 'flow' : 'node'}'s trigger is disabled`, 'forbidden');
  if (method !== undefined && !trigger.allowedMethods.includes(method.toUpperCase() as TriggerMethod)) {
    throw new DomainError('TRIGGER_METHOD_NOT_ALLOWED', `${method.toUpperCase()} is not allowed on this trigger`, 'method_not_allowed', { allowedMethods: trigger.allowedMethods });
  }
  return { flow, nodeId, trigger };
}

/** The key a request presents, from `X-Trigger-Key` only: keys in URLs end up in access logs. */
export function presentedTriggerKey(ctx: Pick<Context, 'get'>): string | undefined {
  return ctx.get(TRIGGER_KEY_HEADER) || undefined;
}

/** For a route handler: verifies the request's key and method; a 405 also sets `Allow`. */
export async function requireTriggerKey(services: Pick<Services, 'eventStore'>, ctx: Context, flowId: string, nodeId: string | null): Promise<VerifiedTrigger> {
  try {
    return await verifyTriggerKey(services, flowId, nodeId, presentedTriggerKey(ctx), ctx.method);
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'method_not_allowed') ctx.set('Allow', (err.details as { allowedMethods: string[] }).allowedMethods.join(', '));
    throw err;
  }
}

/**
 * Koa middleware for routes with `:flowId` (and optionally `:nodeId`) path parameters: on success
 * the verified trigger is in `ctx.state.trigger`; failures throw for the error handler to answer.
 */
export function triggerKeyMiddleware(services: Pick<Services, 'eventStore'>): Middleware {
  return async (ctx, next) => {
    const params = (ctx as Context & { params?: Record<string, string> }).params ?? {};
    if (!params.flowId) throw invalidTriggerKey();
    ctx.state.trigger = await requireTriggerKey(services, ctx, params.flowId, params.nodeId ?? null);
    await next();
  };
}
