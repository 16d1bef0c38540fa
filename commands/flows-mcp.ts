import { Ajv } from 'ajv';
import { MCP_TOOL_NAME_PATTERN, flowDecider, flowNotFound, flowStreamId, isVisibleTo, sanitizeToolName, validationFailed, type FlowScope } from '../domain/flows/index.js';
import { isFinished, type RunState } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore, PendingStream } from '../ports/event-store.js';
import type { McpServedToolResult, McpToolProgress } from '../ports/mcp-server.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import { writeUserFlow } from './flows.js';
import { loadState, type CommandContext } from './handle.js';
import { claimReservation, releaseReservation, reservationStreamId } from './reservations.js';
import { cachedRun, startRun, type RunStartPorts } from './runs.js';

/**
 * Flows as tools of the service's own MCP server (`/api/mcp`, issue 32 item 5): the owner's
 * setting (SetMcpExposure, with the tool name held unique per tenant by a reservation stream) and
 * a tool call (a synchronous run of the flow, as `POST /flows/{flowId}/run` starts it, with its
 * nodes' progress). Pure of the MCP SDK: infra/mcp-server speaks the protocol.
 */

const TOOL_NAME_SCOPE = 'mcptool';

/** Draft-07 with unknown keywords allowed (like app contracts): any valid JSON Schema of an object. Memo of constants. */
const ajv = new Ajv({ strict: false, validateSchema: true, addUsedSchema: false });

/** Refuses an input schema that is not a valid JSON Schema (meta-schema, then compilation), naming `body.inputSchema`. */
export function checkToolInputSchema(schema: Record<string, unknown>): void {
  if (!ajv.validateSchema(schema)) {
    const first = ajv.errors?.[0];
    throw validationFailed([{ field: `body.inputSchema${first?.instancePath ? first.instancePath.replace(/\//g, '.') : ''}`, message: first?.message ?? 'is not a JSON Schema' }]);
  }
  try {
    ajv.compile(schema);
    ajv.removeSchema(schema);
  } catch (err) {
    throw validationFailed([{ field: 'body.inputSchema', message: (err as Error).message }]);
  }
}

/** The tenant a tool name is unique in: the workspace of an organization, or a user's personal flows. */
function tenantKey(scope: FlowScope): string {
  return scope.orgId === null ? `user:${scope.userId}` : `ws:${scope.orgId}:${scope.workspaceId ?? ''}`;
}

const nameKey = (scope: FlowScope, toolName: string) => `${tenantKey(scope)}:${toolName.toLowerCase()}`;

/** Who holds a tool name (a flow id), from the last event of its reservation stream. */
async function toolNameHolder(store: EventStore, key: string): Promise<string | null> {
  const [last] = await store.readStream(reservationStreamId(TOOL_NAME_SCOPE, key), { direction: 'backwards', maxCount: 1 });
  return last?.type === 'ReservationClaimed' ? (last.data as { ownerId: string }).ownerId : null;
}

/** A holder whose flow no longer uses the name (deleted, unexposed, renamed) gives it up. */
async function holdsName(store: EventStore, flowId: string, toolName: string): Promise<boolean> {
  const { state } = await loadState(store, flowStreamId(flowId), flowDecider);
  return state.exists && !state.deleted && state.mcp !== null && state.mcp.enabled && state.mcp.toolName.toLowerCase() === toolName.toLowerCase();
}

async function claimToolName(store: EventStore, context: CommandContext, scope: FlowScope, toolName: string, flowId: string): Promise<void> {
  const key = nameKey(scope, toolName);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await claimReservation(store, context, TOOL_NAME_SCOPE, key, flowId);
      return;
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'ALREADY_TAKEN')) throw err;
    }
    const holder = await toolNameHolder(store, key);
    if (holder === null) continue;
    if (holder !== flowId && (await holdsName(store, holder, toolName))) break;
    await releaseReservation(store, context, TOOL_NAME_SCOPE, key, holder);
  }
  throw new DomainError('MCP_TOOL_NAME_TAKEN', `another flow of this workspace is exposed as the MCP tool "${toolName}"`, 'conflict', { field: 'body.toolName', toolName });
}

export interface McpExposureRequest {
  enabled: boolean;
  /** Absent: the current one, else the flow's name sanitized. */
  toolName?: string;
  description?: string | null;
  inputSchema?: Record<string, unknown> | null;
}

/**
 * The owner's setting. The tool name is claimed for the flow before the event is written, and the
 * name it leaves (renamed, or exposure turned off) released after; a stale claim of a flow that no
 * longer uses the name is taken over, so a deleted flow does not keep its name.
 */
export async function setFlowMcpExposure(
  ports: { eventStore: EventStore; sealer: Pick<SecretSealer, 'seal'> },
  context: CommandContext,
  flowId: string,
  scope: FlowScope,
  request: McpExposureRequest,
  expectedRevision?: number,
) {
  const { eventStore } = ports;
  const { state } = await loadState(eventStore, flowStreamId(flowId), flowDecider);
  if (!state.exists || state.deleted || !isVisibleTo(state, scope)) throw flowNotFound();
  if (request.inputSchema) checkToolInputSchema(request.inputSchema);
  const before = state.mcp;
  const toolName = request.toolName ?? before?.toolName ?? sanitizeToolName(state.name, flowId);
  const description = request.description !== undefined ? request.description : (before?.description ?? null);
  const inputSchema = request.inputSchema !== undefined ? request.inputSchema : (before?.inputSchema ?? null);
  const named = MCP_TOOL_NAME_PATTERN.test(toolName);
  if (request.enabled && named) await claimToolName(eventStore, context, scope, toolName, flowId);
  const written = await writeUserFlow(eventStore, context, flowId, { type: 'SetMcpExposure', enabled: request.enabled, toolName, description, inputSchema }, { scope, expectedRevision, sealer: ports.sealer });
  const left = before?.enabled ? before.toolName : null;
  if (left && (!request.enabled || left.toLowerCase() !== toolName.toLowerCase())) {
    await releaseReservation(eventStore, context, TOOL_NAME_SCOPE, nameKey(scope, left), flowId).catch(() => undefined);
  }
  return written;
}

// ---------------------------------------------------------------- a tool call

const POLL_MS = 25;
/** A node that will not change any more (a skipped node is done too). */
const NODE_DONE = new Set(['completed', 'failed', 'skipped']);

/**
 * Runs the flow synchronously for the caller (the same startRun as `POST /flows/{flowId}/run`,
 * source `mcp`) and reports each node that finishes through `progress`: the run is followed in
 * this process's own view of it (the pending stream the executor holds, then the handler's cache),
 * every 25 ms, without reading the log; what is left is reported when the run ends, before the
 * result. A failed, stopped or timed-out run is `isError` with its failure.
 */
export async function callFlowTool(
  ports: RunStartPorts,
  context: CommandContext,
  scope: FlowScope,
  flowId: string,
  args: Record<string, unknown>,
  progress: ((step: McpToolProgress) => Promise<void>) | null,
): Promise<McpServedToolResult> {
  let held: PendingStream<RunState> | undefined;
  let processId: string | null = null;
  const runs = {
    get localWorkerId() {
      return ports.runs.localWorkerId;
    },
    execute(id: string, workerId: string, pending?: PendingStream<RunState>) {
      processId = id;
      held = pending;
      return ports.runs.execute(id, workerId, pending);
    },
    abort: (id: string, reason?: string) => ports.runs.abort(id, reason),
    isExecuting: (id: string) => ports.runs.isExecuting(id),
  };
  const reported = new Set<string>();
  let chain = Promise.resolve();
  const report = (run: RunState | undefined) => {
    if (!progress || !run?.exists) return;
    const nodes = Object.entries(run.nodes)
      .filter(([id, n]) => !reported.has(id) && NODE_DONE.has(n.status))
      .sort(([, a], [, b]) => (a.finishedAt ?? '').localeCompare(b.finishedAt ?? ''));
    const total = Object.keys(run.nodes).length;
    for (const [id, node] of nodes) {
      reported.add(id);
      const step = { progress: reported.size, total, message: `node ${id} ${node.status}` };
      chain = chain.then(() => progress(step)).catch(() => undefined);
    }
  };
  const current = (): RunState | undefined => (held && !held.flushed ? held.state : processId ? cachedRun(ports.eventStore, processId) : undefined);
  const timer = progress ? setInterval(() => report(current()), POLL_MS) : null;
  let state: RunState | null;
  try {
    const started = await startRun({ ...ports, runs }, context, { flowId, mode: 'flow', inputs: args, async: false, requestedBy: scope.userId, source: 'mcp', scope }, { userId: scope.userId, idempotencyKey: null });
    state = started.state;
  } finally {
    if (timer) clearInterval(timer);
  }
  if (state) report(state);
  await chain;
  return toolResultOf(processId ?? 'unknown', state);
}

function toolResultOf(processId: string, run: RunState | null): McpServedToolResult {
  if (!run || !isFinished(run.status)) {
    return { text: 'the run did not finish', structuredContent: { processId, status: run?.status ?? 'unknown', outputs: null }, isError: true };
  }
  const outputs = run.outputs ?? {};
  if (run.status !== 'completed') {
    const failure = run.failure ?? { code: `RUN_${run.status.toUpperCase()}`, reason: `the run is ${run.status}`, nodeId: null };
    return {
      text: `${failure.code}: ${failure.reason}`,
      structuredContent: { processId, status: run.status, outputs, error: { code: failure.code, message: failure.reason, nodeId: failure.nodeId } },
      isError: true,
    };
  }
  const values = Object.values(outputs);
  const text = values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(outputs);
  return { text, structuredContent: { processId, status: run.status, outputs }, isError: false };
}
