import { WORKFLOW_ONLY_NODE_TYPES } from '../../domain/flows/node-data.js';
import { RunInputError, type NodeKind } from '../../domain/runs/index.js';

/**
 * wait_signal, sleep, set_state and query are decided by the workflow aggregate (domain/workflows),
 * continue_as_new by the workflow worker; a plain
 * flow run has no signals, durable timers or workflow state, so there they fail with WORKFLOW_ONLY_NODE
 * instead of silently passing their input on.
 */
export const workflowOnlyKinds: NodeKind[] = WORKFLOW_ONLY_NODE_TYPES.map((type) => ({
  type,
  async execute() {
    throw new RunInputError('WORKFLOW_ONLY_NODE', `a ${type} node runs only inside a workflow (POST /api/workflows)`);
  },
}));
