import { DomainError } from '../shared/decider.js';
import type { FlowCommandOf } from './commands.js';
import { connectionProblems, idProblems, toEdge } from './definition.js';
import type { ConnectionInput, FlowEdge, FlowEvent } from './events.js';
import { connectionProblem } from './graph.js';
import { checkWriteSize, connectionNotFound, graphRejected, limitExceeded, requireFlow, validationFailed } from './guards.js';
import { jsonEqual } from './json.js';
import { MAX_EDGES_PER_FLOW } from './limits.js';
import { findEdge, type FlowState } from './state.js';

/**
 * Checks one new connection against the edges so far: fields, id, limit, then the structural
 * rules (dangling end, self-loop, duplicate, cycle), each refused with its own code. `prefix` names
 * the body part (`body`, `body.connections.2`); `index` goes into details for batches.
 */
function checkNewConnection(state: FlowState, edges: FlowEdge[], connectionId: string, connection: ConnectionInput, prefix: string, index?: number): FlowEdge {
  const problems = [...idProblems(connectionId, `${prefix}.id`, 'edge'), ...connectionProblems(connection, prefix)];
  if (problems.length > 0) throw validationFailed(problems);
  const where = index === undefined ? {} : { index };
  if (edges.some((e) => e.id === connectionId)) {
    throw new DomainError('CONNECTION_ID_TAKEN', `connection id ${connectionId} is already used in this flow`, 'conflict', { connectionId, ...where });
  }
  if (edges.length >= MAX_EDGES_PER_FLOW) throw limitExceeded('edgesPerFlow', MAX_EDGES_PER_FLOW, edges.length + 1);
  const edge = toEdge(connectionId, connection);
  const problem = connectionProblem(state.nodes, edges, edge);
  if (problem) throw graphRejected([problem], where);
  return edge;
}

export function addConnection(command: FlowCommandOf<'AddConnection'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const edge = checkNewConnection(state, state.edges, command.connectionId, command.connection, 'body');
  return [{ type: 'ConnectionAdded', data: { edge, at: command.at } }];
}

/** All or none: each connection is checked against the flow plus the ones before it in the batch. */
export function addConnections(command: FlowCommandOf<'AddConnections'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  let edges = state.edges;
  const events: FlowEvent[] = [];
  command.connections.forEach(({ connectionId, connection }, index) => {
    const edge = checkNewConnection(state, edges, connectionId, connection, `body.connections.${index}`, index);
    edges = [...edges, edge];
    events.push({ type: 'ConnectionAdded', data: { edge, at: command.at } });
  });
  checkWriteSize(edges.slice(state.edges.length));
  return events;
}

/** Fields given replace the connection's; a moved connection is checked like a new one. */
export function updateConnection(command: FlowCommandOf<'UpdateConnection'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const current = findEdge(state, command.connectionId);
  if (!current) throw connectionNotFound([command.connectionId]);
  const changes = Object.fromEntries(Object.entries(command.changes).filter(([, v]) => v !== undefined));
  const { id, ...fields } = current;
  const merged = { ...fields, ...changes } as ConnectionInput;
  const problems = connectionProblems(merged, 'body');
  if (problems.length > 0) throw validationFailed(problems);
  const edge = toEdge(id, merged);
  if (jsonEqual(edge, current)) return [];
  const problem = connectionProblem(
    state.nodes,
    state.edges.filter((e) => e.id !== id),
    edge,
  );
  if (problem) throw graphRejected([problem]);
  return [{ type: 'ConnectionUpdated', data: { edge, at: command.at } }];
}

export function removeConnection(command: FlowCommandOf<'RemoveConnection'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  if (!findEdge(state, command.connectionId)) throw connectionNotFound([command.connectionId]);
  return [{ type: 'ConnectionRemoved', data: { edgeId: command.connectionId, at: command.at } }];
}

/** All or none: one unknown id refuses the batch, naming every unknown id. */
export function removeConnections(command: FlowCommandOf<'RemoveConnections'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const ids = [...new Set(command.connectionIds)];
  const missing = ids.filter((id) => !findEdge(state, id));
  if (missing.length > 0) throw connectionNotFound(missing);
  return ids.map((edgeId) => ({ type: 'ConnectionRemoved', data: { edgeId, at: command.at } }));
}
