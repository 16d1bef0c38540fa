/**
 * The workflow aggregate (stream `workflow-<workflowId>`): a durable, long-lived execution of a
 * flow. Nodes are scheduled with the run engine's scheduler (domain/runs/scheduler.ts) over an
 * embedded run state; wait_signal, sleep, set_state and query are decided here, other kinds run on a
 * worker (continue_as_new there too: it creates the next execution's stream).
 */
import { decider, fold, type Decider } from '../shared/decider.js';
import type { WorkflowCommand } from './commands.js';
import { decideWorkflow } from './decide.js';
import { workflowEventSchemas, type WorkflowEvent } from './events.js';
import { evolveWorkflow, initialWorkflowState, isClosed, type WorkflowState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './commands.js';
export * from './errors.js';
export { decideWorkflow, workflowStreamId, MAX_WORKFLOW_CREATE_BYTES } from './decide.js';
export { sleepTimerId, signalTimeoutTimerId, executionTimeoutTimerId, resultOf, renderDeep } from './advance.js';
export * from './query-language.js';
export * from './view.js';

export const workflowDecider: Decider<WorkflowCommand, WorkflowState, WorkflowEvent> = {
  ...decider(initialWorkflowState, evolveWorkflow, decideWorkflow, workflowEventSchemas),
  settled: (state) => state.exists && isClosed(state.status),
  // A workflow signalled for months is a long stream: snapshotted (commands/snapshots.ts). Bump when evolveWorkflow (or evolveRun) folds differently.
  stateVersion: 1,
};

export const foldWorkflow = (events: Iterable<{ type: string; data: unknown }>): WorkflowState => fold(evolveWorkflow, initialWorkflowState, events as Iterable<WorkflowEvent>);
