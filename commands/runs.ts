import { flowNotFound, flowStreamId, foldFlow, isVisibleTo, nodeNotFound, type FlowScope } from '../domain/flows/index.js';
import { foldRun, runDecider, runStreamId, type OverrideConfig, type RunCommand, type RunMode } from '../domain/runs/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

/**
 * The run's write side. Requesting a run folds the flow from its own stream (the write side may read
 * the log; the read model could lag behind an edit made a moment ago) and snapshots its definition
 * into RunRequested, so later edits never change a run.
 */
export interface RunRequest {
  flowId: string;
  mode: RunMode;
  nodeId?: string | null;
  inputs: Record<string, unknown>;
  async: boolean;
  requestedBy: string | null;
  /** `api`, `trigger`, … */
  source: string;
  saveToHistory?: boolean;
  overrideConfig?: OverrideConfig | null;
  idempotencyKey?: string | null;
  /** The caller's tenant; null for public triggers (the key already proved access). */
  scope: FlowScope | null;
  /** A synchronous run executed by the caller's process: claimed in the same decision. */
  claimBy?: string;
}

export async function requestRun(store: EventStore, context: CommandContext, processId: string, request: RunRequest) {
  const flow = foldFlow(await store.readStream(flowStreamId(request.flowId)));
  if (!flow.exists || flow.deleted || (request.scope && !isVisibleTo(flow, request.scope))) throw flowNotFound();
  if (request.mode === 'node' && !flow.nodes.some((n) => n.id === request.nodeId)) throw nodeNotFound(request.nodeId ?? '');
  return handleCommand(store, {
    streamId: runStreamId(processId),
    decider: runDecider,
    command: {
      type: 'RequestRun',
      processId,
      flowId: request.flowId,
      flowVersion: flow.version,
      ownerId: flow.ownerId,
      orgId: flow.orgId,
      workspaceId: flow.workspaceId,
      mode: request.mode,
      nodeId: request.mode === 'node' ? request.nodeId : null,
      nodes: flow.nodes,
      edges: flow.edges,
      inputs: request.inputs,
      async: request.async,
      requestedBy: request.requestedBy,
      source: request.source,
      saveToHistory: request.saveToHistory ?? false,
      overrideConfig: request.overrideConfig ?? null,
      idempotencyKey: request.idempotencyKey ?? null,
      ...(request.claimBy !== undefined && { claimBy: request.claimBy }),
      at: context.now.toISOString(),
    },
    context,
  });
}

type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

/** Every other run command (the worker's and stop): time from the context. */
export function executeRunCommand(store: EventStore, context: CommandContext, processId: string, command: WithoutAt<Exclude<RunCommand, { type: 'RequestRun' }>>) {
  return handleCommand(store, {
    streamId: runStreamId(processId),
    decider: runDecider,
    command: { ...command, at: context.now.toISOString() } as RunCommand,
    context,
  });
}

export function requestStop(store: EventStore, context: CommandContext, processId: string, by: string | null) {
  return executeRunCommand(store, context, processId, { type: 'RequestStop', by });
}

/** The run's state from its stream (the worker's view; never the read model). */
export async function loadRun(store: EventStore, processId: string) {
  return foldRun(await store.readStream(runStreamId(processId)));
}
