import { z } from 'zod';
import { requestRun, type RunRequest } from '../../commands/runs.js';
import { executeRun, LOCAL_WORKER_ID } from '../../consumers/run-executor.js';
import { overrideConfigSchema, runStreamId, type RunState } from '../../domain/runs/index.js';
import { findIdempotentProcess, getProcess, runStateView, type ProcessView } from '../../projections/runs.js';
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

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

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
 * request's own decision) and awaited; async ones go to the run worker through the bus. A repeated
 * Idempotency-Key (same user, within 24 h) runs nothing and returns the first run — waiting for
 * it to finish when it was synchronous.
 */
export async function startRun(input: AnyInput, request: Omit<RunRequest, 'idempotencyKey' | 'claimBy'>): Promise<StartedRun> {
  const { services } = input;
  const key = input.principal ? idempotencyKeyOf(input) : null;
  if (key && input.principal) {
    const since = new Date(services.now().getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const earlier = await findIdempotentProcess(services.readStore, input.principal.userId, key, since);
    if (earlier) {
      let doc = earlier;
      const deadline = Date.now() + services.config.NODE_TIMEOUT_MS;
      while (!request.async && !['completed', 'failed', 'stopped'].includes(doc.status) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        doc = (await getProcess(services.readStore, earlier._id, null)) ?? doc;
      }
      return { processId: earlier._id, state: null, repeated: runStateView(doc._id, JSON.parse(doc.state)) };
    }
  }
  const processId = services.newId();
  const result = await requestRun(services.eventStore, input.command, processId, {
    ...request,
    idempotencyKey: key,
    ...(request.async ? {} : { claimBy: LOCAL_WORKER_ID }),
  });
  if (request.async) {
    await input.settle(result.position, runStreamId(processId));
    return { processId, state: null, repeated: null };
  }
  const state = await executeRun(services, processId, LOCAL_WORKER_ID);
  const [last] = await services.eventStore.readStream(runStreamId(processId), { fromRevision: Math.max(0, state.version), maxCount: 1 });
  await input.settle(last?.position ?? result.position, runStreamId(processId));
  return { processId, state, repeated: null };
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
