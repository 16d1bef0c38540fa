import type { FlowCommandOf } from './commands.js';
import { historyEntrySchema, type FlowEvent, type HistoryEntry } from './events.js';
import { historyEntryNotFound, requireFlow, requireNode, validationFailed } from './guards.js';
import { MAX_HISTORY_OUTPUT_BYTES, MAX_HISTORY_ERROR_LENGTH } from './limits.js';
import { historyOf, type FlowState } from './state.js';
import { issuesToProblems } from './validate-node.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * An output as JSON, or (when it is too big to keep in a flow stream) the start of its JSON text
 * cut to the byte limit; a run's full output lives in its own `run-…` stream.
 */
export function boundOutput(output: unknown): { output: HistoryEntry['output']; outputTruncated: boolean } {
  const json = JSON.stringify(output === undefined ? null : output) ?? 'null';
  const bytes = encoder.encode(json);
  if (bytes.length <= MAX_HISTORY_OUTPUT_BYTES) return { output: JSON.parse(json) as HistoryEntry['output'], outputTruncated: false };
  // A cut through a multi-byte character decodes to U+FFFD; drop it.
  const preview = decoder.decode(bytes.subarray(0, MAX_HISTORY_OUTPUT_BYTES)).replace(/\uFFFD+$/, '');
  return { output: preview, outputTruncated: true };
}

/** Idempotent by entryId, so a redelivered run event records nothing twice. */
export function recordNodeExecution(command: FlowCommandOf<'RecordNodeExecution'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireNode(state, command.nodeId);
  if (historyOf(state, command.nodeId).some((e) => e.entryId === command.entryId)) return [];
  const error = command.error == null ? null : command.error.slice(0, MAX_HISTORY_ERROR_LENGTH);
  let output: ReturnType<typeof boundOutput>;
  try {
    output = boundOutput(command.output);
  } catch (err) {
    throw validationFailed([{ field: 'output', message: `must be JSON (${(err as Error).message})` }]);
  }
  const entry: HistoryEntry = {
    entryId: command.entryId,
    processId: command.processId,
    status: command.status,
    ...output,
    error,
    usage: command.usage ?? null,
    executionTime: command.executionTime,
    at: command.at,
  };
  const parsed = historyEntrySchema.safeParse(entry);
  if (!parsed.success) throw validationFailed(issuesToProblems(parsed.error.issues, ''));
  return [{ type: 'NodeExecutionRecorded', data: { nodeId: command.nodeId, entry } }];
}

export function deleteHistoryEntry(command: FlowCommandOf<'DeleteHistoryEntry'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireNode(state, command.nodeId);
  if (!historyOf(state, command.nodeId).some((e) => e.entryId === command.entryId)) throw historyEntryNotFound(command.nodeId, command.entryId);
  return [{ type: 'NodeHistoryEntryDeleted', data: { nodeId: command.nodeId, entryId: command.entryId, at: command.at } }];
}

/** Clearing an empty history is no event. */
export function clearNodeHistory(command: FlowCommandOf<'ClearNodeHistory'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireNode(state, command.nodeId);
  if (historyOf(state, command.nodeId).length === 0) return [];
  return [{ type: 'NodeHistoryCleared', data: { nodeId: command.nodeId, at: command.at } }];
}

export function clearFlowHistory(command: FlowCommandOf<'ClearFlowHistory'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  if (Object.values(state.history).every((entries) => entries.length === 0)) return [];
  return [{ type: 'FlowHistoryCleared', data: { at: command.at } }];
}
