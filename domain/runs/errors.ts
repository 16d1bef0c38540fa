import { DomainError, type ErrorKind } from '../shared/decider.js';

/**
 * The stable error codes of the run domain with their kind of refusal. Worker-facing rejections are
 * conflicts (the run moved on; reload and look again), missing things not_found.
 */
/** The codes of a node's steps and of a definition's checks, the same in a run and in a workflow. */
export const NODE_STEP_ERROR_CODES = {
  NODE_NOT_READY: 'conflict',
  NODE_NOT_RUNNING: 'conflict',
  STALE_ATTEMPT: 'conflict',
  FLOW_HAS_NO_NODES: 'invalid',
  VALIDATION_FAILED: 'invalid',
  LIMIT_EXCEEDED: 'too_large',
  OUTPUT_TOO_LARGE: 'too_large',
} as const satisfies Record<string, ErrorKind>;

export const RUN_ERROR_CODES = {
  RUN_NOT_FOUND: 'not_found',
  NODE_NOT_FOUND: 'not_found',
  RUN_ALREADY_EXISTS: 'conflict',
  RUN_ALREADY_FINISHED: 'conflict',
  RUN_NOT_CLAIMED: 'conflict',
  RUN_CLAIMED_BY_OTHER_WORKER: 'conflict',
  RUN_STOP_REQUESTED: 'conflict',
  STOP_NOT_REQUESTED: 'conflict',
  RUN_NOT_DONE: 'conflict',
  NODE_NOT_SKIPPABLE: 'conflict',
  ...NODE_STEP_ERROR_CODES,
} as const satisfies Record<string, ErrorKind>;
export type RunErrorCode = keyof typeof RUN_ERROR_CODES;

export const runError = (code: RunErrorCode, message: string, details?: Record<string, unknown>) =>
  new DomainError(code, message, RUN_ERROR_CODES[code], details);

export const runNotFound = () => runError('RUN_NOT_FOUND', 'run not found');
export const runNodeNotFound = (nodeId: string) => runError('NODE_NOT_FOUND', `node ${nodeId} is not part of this run`, { nodeId });

/**
 * Problems of a condition or template met while a node runs (a regex too costly, a template too
 * big). Not a DomainError of the decider: the consumer records it as the node's failure
 * (`NodeFailed.error.code`).
 */
export class RunInputError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RunInputError';
  }
}
