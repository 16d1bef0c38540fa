import { z } from 'zod';
import { claimIdempotencyKey, idempotencyHolder, loadRun, releaseIdempotencyKey, requestRun, type RunRequest } from '../../commands/runs.js';
import { executeRun, LOCAL_WORKER_ID } from '../../consumers/runs-executor.js';
import { isFinished, overrideConfigSchema, runStreamId, type RunState } from '../../domain/runs/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Services } from '../../infra/ports/services.js';
import { assertWithinBudget } from '../../infra/llm/registry.js';
import type { LlmProviderId } from '../../infra/ports/llm.js';
import { getFlow } from '../../projections/flows.js';
import { runStateView, type ProcessView } from '../../projections/runs.js';
import { ValidationError } from '../errors.js';
import type { RouteInput, RouteReply } from '../route.js';

/** Shared by the processing routes and the public triggers: start a run, sync or async, and answer. */

type AnyInput = RouteInput<unknown, unknown, unknown>;

export const runInputs = z.record(z.string(), z.json()).default({});
export const processBody = z.strictObject({
  inputs: runInputs,
  async: z.boolean().default(false),
  saveToHistory: z.boolean().default(false),
  overrideConfig: overrideConfigSchema.strict().nullable().optional(),
});
export const runBody = z.strictObject({
  inputs: runInputs,
  async: z.boolean().default(false),
  saveToHistory: z.boolean().default(false),
  overrideConfig: overrideConfigSchema.strict().nullable().optional(),
});

/** `Idempotency-Key`: 1–200 printable characters. */
export function idempotencyKeyOf(input: Pick<AnyInput, 'koa'>): string | null {
  const key = input.koa.get('idempotency-key');
  if (!key) return null;
  if (key.length > 200 || !/^[\x21-\x7e]+$/.test(key)) throw new ValidationError([{ field: 'headers.idempotency-key', message: 'must be 1-200 visible ASCII characters' }]);
  return key;
}

export interface StartedRun {
  processId: string;
  /** The final state for a synchronous run, null for an async one (or a repeated async request). */
  state: RunState | null;
  /** The process of an earlier request with the same Idempotency-Key. */
  repeated: ProcessView | null;
}

/**
 * Starts a run for the request. Synchronous runs are executed by this process (claimed in the
 * request's own decision) and awaited; async ones go to the run worker through the bus.
 *
 * Idempotency-Key (per user, 24 h; public triggers have no user and no idempotency): the key is
 * claimed for the new processId in a reservation stream before anything runs, so of two identical
 * requests arriving together one runs and the other waits for that run — until it exists (async)
 * or has finished (sync, bounded by NODE_TIMEOUT_MS; after that it answers the run as it stands) —
 * and answers it. A request that fails before its run exists releases the key.
 */
export async function startRun(input: AnyInput, request: Omit<RunRequest, 'idempotencyKey' | 'claimBy'>): Promise<StartedRun> {
  const { services } = input;
  const userId = input.principal?.userId ?? null;
  const key = userId ? idempotencyKeyOf(input) : null;
  const processId = services.newId();
  await assertRunWithinBudget(input, request);
  if (key && userId) {
    let owned = false;
    // Two rounds: when the first request failed before creating its run, its key is free again.
    for (let round = 0; round < 2 && !owned; round++) {
      const claim = await claimIdempotencyKey(services.eventStore, input.command, userId, key, processId);
      if (claim.owned) owned = true;
      else {
        const earlier = await awaitEarlierRun(services, userId, key, claim.processId, !request.async);
        if (earlier) return { processId: claim.processId, state: null, repeated: runStateView(claim.processId, earlier) };
      }
    }
    if (!owned) throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'another request with this Idempotency-Key is in progress; retry later', 'conflict');
  }
  let result;
  try {
    result = await requestRun(services.eventStore, input.command, processId, {
      ...request,
      idempotencyKey: key,
      ...(request.async ? {} : { claimBy: LOCAL_WORKER_ID }),
    });
  } catch (err) {
    if (key && userId) await releaseIdempotencyKey(services.eventStore, input.command, userId, key, processId).catch(() => undefined);
    throw err;
  }
  if (request.async) {
    await input.settle(result.position, runStreamId(processId));
    return { processId, state: null, repeated: null };
  }
  const state = await executeRun(services, processId, LOCAL_WORKER_ID);
  const [last] = await services.eventStore.readStream(runStreamId(processId), { fromRevision: Math.max(0, state.version), maxCount: 1 });
  await input.settle(last?.position ?? result.position, runStreamId(processId));
  return { processId, state, repeated: null };
}

/**
 * The run of the request that holds the key, from the log (the read model may lag): once it exists
 * (and, for a synchronous request, once it finished or the wait ran out). Null when it never
 * appeared because its request gave the key up, or did not appear within the read-your-writes bound.
 */
async function awaitEarlierRun(services: Services, userId: string, key: string, processId: string, sync: boolean): Promise<RunState | null> {
  const started = Date.now();
  const appearBy = started + Math.max(services.config.READ_YOUR_WRITES_TIMEOUT_MS, 1000);
  const finishBy = started + services.config.NODE_TIMEOUT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const run = await loadRun(services.eventStore, processId);
    if (run.exists) {
      if (!sync || isFinished(run.status) || Date.now() >= finishBy) return run;
    } else {
      if (Date.now() >= appearBy) return null;
      const holder = await idempotencyHolder(services.eventStore, userId, key);
      if (holder?.processId !== processId) return null;
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}

export const queued = (processId: string): RouteReply => ({ status: 202, body: { success: true, processId, status: 'queued' } });

/** The seed's process-node answer (200), or 500 with the error body when the node failed. */
export function nodeReply(view: ProcessView, nodeId: string): RouteReply {
  const node = view.nodes.find((n) => n.nodeId === nodeId);
  if (!node || node.status !== 'completed') {
    const error = node?.error ?? (view.error ? { code: view.error.code, message: view.error.reason } : { code: 'RUN_NOT_COMPLETED', message: `the run is ${view.status}` });
    const { code, message, ...rest } = error as { code: string; message: string; provider?: string };
    return { status: view.status === 'stopped' ? 409 : 500, body: { success: false, error: { code, message, details: { ...rest, nodeId, processId: view.processId, status: view.status } } } };
  }
  return {
    status: 200,
    body: {
      success: true,
      nodeId,
      result: {
        output: node.output ?? null,
        metadata: node.metadata,
        conditionalResults: node.conditionalResults.map((c) => ({ condition: c.condition, result: c.result, targetNodeId: c.targetNodeId })),
        usage: { total_tokens: node.usage?.total_tokens ?? 0, cost: node.usage?.cost ?? 0 },
      },
      executionTime: node.executionTime ?? 0,
      timestamp: node.finishedAt ?? view.finishedAt ?? new Date().toISOString(),
      processId: view.processId,
    },
  };
}

/** A whole run's answer: every node's state and the run's status (200 whatever the outcome). */
export function runReply(view: ProcessView): RouteReply {
  const started = view.startedAt ? Date.parse(view.startedAt) : NaN;
  const finished = view.finishedAt ? Date.parse(view.finishedAt) : NaN;
  return {
    status: 200,
    body: {
      success: view.status === 'completed',
      ...view,
      executionTime: Number.isFinite(started) && Number.isFinite(finished) ? finished - started : null,
      timestamp: view.finishedAt ?? new Date().toISOString(),
    },
  };
}

/** Answer for a started run in the requested mode. */
export function replyFor(started: StartedRun, mode: 'node' | 'flow', nodeId: string | null, async: boolean): RouteReply {
  if (async) return queued(started.processId);
  const view = started.repeated ?? runStateView(started.processId, started.state!);
  return mode === 'node' ? nodeReply(view, nodeId!) : runReply(view);
}

/**
 * An organization over its budget gets 402 before a run that would call a paid provider starts,
 * rather than a run that fails at its first llm node. The offline provider stays free.
 */
async function assertRunWithinBudget(input: AnyInput, request: Pick<RunRequest, 'flowId' | 'mode' | 'nodeId'>) {
  const flow = await getFlow(input.services.readStore, request.flowId, null);
  if (!flow?.orgId) return;
  const nodes = request.mode === 'node' ? flow.nodes.filter((n) => n.id === request.nodeId) : flow.nodes;
  const paid = nodes.map((n) => n.data.llm).find((p): p is string => typeof p === 'string' && p !== 'offline');
  if (paid) await assertWithinBudget(input.services, { orgId: flow.orgId }, paid as LlmProviderId);
}
