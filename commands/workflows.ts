import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, type FlowScope } from '../domain/flows/index.js';
import { isClosed, workflowDecider, workflowNotFound, workflowStreamId, type CreateWorkflowCommand, type WorkflowCommand, type WorkflowState } from '../domain/workflows/index.js';
import type { EventStore } from '../ports/event-store.js';
import { cachedState, handleCommand, handleCommands, loadState, type CommandContext, type WithoutAt } from './handle.js';

/**
 * The workflow's write side. Creating a workflow folds the flow from its own stream and snapshots
 * its definition into WorkflowCreated. Every other command folds the workflow stream; a workflow
 * outside the caller's scope is WORKFLOW_NOT_FOUND (404), like a missing one.
 */
export type CreateWorkflowRequest = Pick<
  CreateWorkflowCommand,
  'workflowId' | 'flowId' | 'input' | 'start' | 'idempotencyPolicy' | 'searchAttributes' | 'memo' | 'executionTimeoutMs' | 'createdBy' | 'state' | 'continuedFrom'
> & { scope: FlowScope | null };

export async function createWorkflow(store: EventStore, context: CommandContext, request: CreateWorkflowRequest) {
  const flow = (await loadState(store, flowStreamId(request.flowId), flowDecider)).state;
  if (!flow.exists || flow.deleted || (request.scope && !isVisibleTo(flow, request.scope))) throw flowNotFound();
  // An id used by another tenant answers like an id in use (nothing about it is revealed).
  return handleCommand(store, {
    streamId: workflowStreamId(request.workflowId),
    decider: workflowDecider,
    context: { ...context, orgId: flow.orgId, workspaceId: flow.workspaceId },
    command: {
      type: 'CreateWorkflow',
      workflowId: request.workflowId,
      flowId: request.flowId,
      flowVersion: flow.version,
      ownerId: flow.ownerId,
      orgId: flow.orgId,
      workspaceId: flow.workspaceId,
      createdBy: request.createdBy,
      nodes: flow.nodes,
      edges: flow.edges,
      input: request.input,
      start: request.start,
      idempotencyPolicy: request.idempotencyPolicy,
      searchAttributes: request.searchAttributes,
      memo: request.memo,
      executionTimeoutMs: request.executionTimeoutMs ?? null,
      state: request.state ?? {},
      continuedFrom: request.continuedFrom ?? null,
      at: context.now.toISOString(),
    },
  });
}

/** The workflow's state from its stream (never the read model): GET /workflows/{id}, queries, the worker. */
export async function loadWorkflow(store: EventStore, workflowId: string): Promise<{ state: WorkflowState; revision: number }> {
  return loadState(store, workflowStreamId(workflowId), workflowDecider);
}

/** The newest state of the workflow this process has folded or written, and its revision, without reading (undefined: none cached). */
export function cachedWorkflow(store: EventStore, workflowId: string): { state: WorkflowState; revision: number } | undefined {
  return cachedState(store, workflowStreamId(workflowId), workflowDecider);
}

const visible = (s: WorkflowState, scope: FlowScope) => isVisibleTo(s, scope);

/** The workflow when it exists and the scope may see it (null scope: internal callers), else WORKFLOW_NOT_FOUND. */
export async function requireWorkflow(store: EventStore, workflowId: string, scope: FlowScope | null): Promise<WorkflowState> {
  const { state } = await loadWorkflow(store, workflowId);
  if (!state.exists || (scope && !visible(state, scope))) throw workflowNotFound();
  return state;
}

/** Any command but CreateWorkflow, checked against the caller's scope first (null: the system acting). */
export async function executeWorkflowCommand(
  store: EventStore,
  context: CommandContext,
  workflowId: string,
  command: WithoutAt<Exclude<WorkflowCommand, { type: 'CreateWorkflow' }>>,
  scope: FlowScope | null = null,
  expectedRevision?: number,
) {
  if (scope) await requireWorkflow(store, workflowId, scope);
  return handleCommand(store, {
    streamId: workflowStreamId(workflowId),
    decider: workflowDecider,
    command: { ...command, at: context.now.toISOString() } as WorkflowCommand,
    context,
    expectedRevision,
  });
}

/**
 * Several commands of the system (the worker) decided in turn and appended together: a local
 * node's start and its end (consumers/workflows.ts). Each command carries its own `at`.
 */
export function executeWorkflowCommands(store: EventStore, context: CommandContext, workflowId: string, commands: ReadonlyArray<(state: WorkflowState) => Exclude<WorkflowCommand, { type: 'CreateWorkflow' }>>) {
  return handleCommands(store, { streamId: workflowStreamId(workflowId), decider: workflowDecider, commands, context });
}

/**
 * Continue-as-new: a fresh workflow (`newWorkflowId`) of the same flow starts carrying the state,
 * search attributes and memo, naming this one in `continuedFrom`; then this execution closes
 * naming the new one. The new one is created first, so a crash in between leaves both open
 * rather than the state lost; a repeat of the call then closes the old one.
 */
export async function continueAsNew(store: EventStore, context: CommandContext, workflowId: string, newWorkflowId: string, options: { scope: FlowScope | null; input?: unknown; by: string | null }) {
  const old = await requireWorkflow(store, workflowId, options.scope);
  if (isClosed(old.status)) {
    await executeWorkflowCommand(store, context, workflowId, { type: 'ContinueAsNew', newWorkflowId, by: options.by }); // WORKFLOW_CLOSED
  }
  const created = await createWorkflow(store, context, {
    workflowId: newWorkflowId,
    flowId: old.flowId,
    input: options.input === undefined ? old.input : options.input,
    start: true,
    idempotencyPolicy: 'reject_duplicate',
    searchAttributes: old.searchAttributes,
    memo: old.memo,
    executionTimeoutMs: old.executionTimeoutMs,
    createdBy: options.by,
    scope: null,
    state: old.state,
    continuedFrom: workflowId,
  });
  const closed = await executeWorkflowCommand(store, context, workflowId, { type: 'ContinueAsNew', newWorkflowId, by: options.by });
  return { old: closed, created };
}
