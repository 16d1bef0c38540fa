import { NODE_STEP_ERROR_CODES } from '../runs/errors.js';
import { DomainError, type ErrorKind } from '../shared/decider.js';

/** The stable error codes of the workflow aggregate with their kind of refusal. */
export const WORKFLOW_ERROR_CODES = {
  WORKFLOW_NOT_FOUND: 'not_found',
  WORKFLOW_TIMER_NOT_FOUND: 'not_found',
  WORKFLOW_ALREADY_STARTED: 'conflict',
  WORKFLOW_CLOSED: 'conflict',
  WORKFLOW_NOT_RUNNING: 'conflict',
  WORKFLOW_NOT_PAUSED: 'conflict',
  WORKFLOW_CANCEL_REQUESTED: 'conflict',
  TIMER_ALREADY_FIRED: 'conflict',
  TIMER_NOT_CANCELABLE: 'conflict',
  TIMER_ID_TAKEN: 'conflict',
  ...NODE_STEP_ERROR_CODES,
} as const satisfies Record<string, ErrorKind>;
export type WorkflowErrorCode = keyof typeof WORKFLOW_ERROR_CODES;

export const workflowError = (code: WorkflowErrorCode, message: string, details?: Record<string, unknown>) => new DomainError(code, message, WORKFLOW_ERROR_CODES[code], details);
export const workflowNotFound = () => workflowError('WORKFLOW_NOT_FOUND', 'workflow not found');
