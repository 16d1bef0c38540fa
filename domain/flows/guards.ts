import { DomainError, type ErrorKind } from '../shared/decider.js';
import type { GraphProblem } from './graph.js';
import { MAX_WRITE_BYTES, MAX_FLOW_DEFINITION_BYTES, jsonByteLength, type FlowLimitName } from './limits.js';
import { findNode, isVisibleTo, type FlowScope, type FlowState } from './state.js';
import type { FieldProblem } from './validate-node.js';

/** The stable error codes of the flow aggregate with their HTTP status (LIMIT_EXCEEDED is 413 for sizes). */
export const FLOW_ERROR_CODES = {
  FLOW_NOT_FOUND: 404,
  NODE_NOT_FOUND: 404,
  CONNECTION_NOT_FOUND: 404,
  HISTORY_ENTRY_NOT_FOUND: 404,
  FLOW_ALREADY_EXISTS: 409,
  NODE_ID_TAKEN: 409,
  CONNECTION_ID_TAKEN: 409,
  VALIDATION_FAILED: 400,
  LIMIT_EXCEEDED: 400,
  DANGLING_EDGE: 400,
  SELF_LOOP: 400,
  DUPLICATE_EDGE: 400,
  CYCLE: 400,
} as const;

export const flowNotFound = () => new DomainError('FLOW_NOT_FOUND', 'flow not found', 'not_found');
export const nodeNotFound = (nodeId: string) => new DomainError('NODE_NOT_FOUND', `node ${nodeId} not found in this flow`, 'not_found', { nodeId });
export const connectionNotFound = (ids: string[]) =>
  new DomainError('CONNECTION_NOT_FOUND', `connection${ids.length > 1 ? 's' : ''} ${ids.join(', ')} not found in this flow`, 'not_found', { connectionIds: ids });
export const historyEntryNotFound = (nodeId: string, entryId: string) =>
  new DomainError('HISTORY_ENTRY_NOT_FOUND', `history entry ${entryId} not found for node ${nodeId}`, 'not_found', { nodeId, entryId });

/** Same code, message format and details as the API's ValidationError: `details.fields` = [{field, message}]. */
export function validationFailed(problems: FieldProblem[]): DomainError {
  return new DomainError('VALIDATION_FAILED', problems.map((p) => `${p.field}: ${p.message}`).join('; '), 'invalid', { fields: problems });
}

/** Counts are 400; byte sizes (a flow, one write) are 413 Payload Too Large, with the same code. */
export function limitExceeded(limit: FlowLimitName, max: number, actual: number, kind: ErrorKind = 'invalid'): DomainError {
  return new DomainError('LIMIT_EXCEEDED', `limit ${limit} is ${max} (this would make ${actual})`, kind, { limit, max, actual });
}

export function checkWriteSize(items: unknown[]): void {
  const bytes = jsonByteLength(items);
  if (bytes > MAX_WRITE_BYTES) throw limitExceeded('writeBytes', MAX_WRITE_BYTES, bytes, 'too_large');
}

/** A structural graph problem refused by the decider: its own code, every problem found in details. */
export function graphRejected(problems: GraphProblem[], extra?: Record<string, unknown>): DomainError {
  return new DomainError(problems[0].code, problems[0].message, 'invalid', { problems, ...extra });
}

/** Missing, deleted and out-of-scope flows are all the same 404. */
export function requireFlow(state: FlowState, scope: FlowScope | undefined): void {
  if (!state.exists || state.deleted) throw flowNotFound();
  if (scope && !isVisibleTo(state, scope)) throw flowNotFound();
}

export function requireNode(state: FlowState, nodeId: string) {
  const node = findNode(state, nodeId);
  if (!node) throw nodeNotFound(nodeId);
  return node;
}

/** The whole flow's nodes and edges (413); what one write carries has the smaller MAX_WRITE_BYTES. */
export function checkDefinitionSize(nodes: unknown[], edges: unknown[], inOneWrite = false): void {
  const bytes = jsonByteLength(nodes) + jsonByteLength(edges);
  if (inOneWrite && bytes > MAX_WRITE_BYTES) throw limitExceeded('writeBytes', MAX_WRITE_BYTES, bytes, 'too_large');
  if (bytes > MAX_FLOW_DEFINITION_BYTES) throw limitExceeded('flowDefinitionBytes', MAX_FLOW_DEFINITION_BYTES, bytes, 'too_large');
}
