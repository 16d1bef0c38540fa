import { DomainError } from '../shared/decider.js';

/**
 * The stable error codes of the run domain with their HTTP status. Worker-facing rejections are
 * 409 (the run moved on; reload and look again), missing things 404.
 */
export const RUN_ERROR_CODES = {
  RUN_NOT_FOUND: 404,
  NODE_NOT_FOUND: 404,
  RUN_ALREADY_EXISTS: 409,
  RUN_ALREADY_FINISHED: 409,
  RUN_NOT_CLAIMED: 409,
  RUN_CLAIMED_BY_OTHER_WORKER: 409,
  RUN_STOP_REQUESTED: 409,
  STOP_NOT_REQUESTED: 409,
  RUN_NOT_DONE: 409,
  NODE_NOT_READY: 409,
  NODE_NOT_RUNNING: 409,
  NODE_NOT_SKIPPABLE: 409,
  STALE_ATTEMPT: 409,
  FLOW_HAS_NO_NODES: 400,
  VALIDATION_FAILED: 400,
  LIMIT_EXCEEDED: 413,
  OUTPUT_TOO_LARGE: 413,
} as const;
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
