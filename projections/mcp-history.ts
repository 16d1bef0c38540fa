import { MCP_CATEGORY, serverIdOfStream, type McpEvent } from '../domain/mcp/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, Page, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/** What an entry's document and its answer share. */
interface McpHistoryFields {
  kind: 'tool_call' | 'resource_read';
  toolName: string | null;
  uri: string | null;
  source: 'api' | 'flow';
  processId: string | null;
  nodeId: string | null;
  actorId: string | null;
  status: 'pending' | 'completed' | 'failed';
  isError: boolean | null;
  text: string | null;
  truncated: boolean;
  durationMs: number | null;
  error: { code: string; message: string } | null;
  progressCount: number;
  requestedAt: string;
  finishedAt: string | null;
}

/**
 * A server's call history (collection `mcp_history`): one entry per tool call and resource read,
 * created by the request and completed by its outcome. Arguments and results stay JSON text.
 */
export interface McpHistoryDoc extends Doc, McpHistoryFields {
  serverId: string;
  /** Revision of the request in the server's stream: the history's order. */
  seq: number;
  arguments: string | null;
  content: string | null;
  structuredContent: string | null;
  /** Revision of the last progress counted: a redelivered progress event is not counted again. */
  progressSeq?: number;
}

/** An entry as the API answers it: arguments and results parsed back from their JSON text. */
export interface McpHistoryEntry extends McpHistoryFields {
  requestId: string;
  arguments: unknown;
  content: unknown;
  structuredContent: unknown;
}

export const MCP_HISTORY = 'mcp_history';
const docId = (serverId: string, requestId: string) => `${serverId}:${requestId}`;
// `?? null`: FerretDB may leave out fields that an upsert's $setOnInsert set to null.
const parse = (json: string | null | undefined) => (json === null || json === undefined ? null : (JSON.parse(json) as unknown));

export function historyEntryOf(doc: McpHistoryDoc): McpHistoryEntry {
  const { _id, serverId, seq: _seq, progressSeq: _progressSeq, ...rest } = doc;
  return {
    ...rest,
    toolName: doc.toolName ?? null,
    uri: doc.uri ?? null,
    processId: doc.processId ?? null,
    nodeId: doc.nodeId ?? null,
    actorId: doc.actorId ?? null,
    isError: doc.isError ?? null,
    text: doc.text ?? null,
    durationMs: doc.durationMs ?? null,
    error: doc.error ?? null,
    finishedAt: doc.finishedAt ?? null,
    requestId: _id.slice(serverId.length + 1),
    arguments: parse(doc.arguments),
    content: parse(doc.content),
    structuredContent: parse(doc.structuredContent),
  };
}

const base = (serverId: string, seq: number, requestedAt: string, actorId: string | null) => ({
  serverId, seq, toolName: null, uri: null, arguments: null, source: 'api' as const, processId: null, nodeId: null, actorId,
  status: 'pending' as const, isError: null, content: null, text: null, structuredContent: null, truncated: false, durationMs: null, error: null,
  progressCount: 0, progressSeq: -1, requestedAt, finishedAt: null,
});

export const mcpHistoryProjector: Projector = {
  name: 'mcp-history',
  categories: [MCP_CATEGORY],
  ...ownedCollections({ [MCP_HISTORY]: [{ keys: { serverId: 1, seq: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & McpEvent;
    const history = store.collection<McpHistoryDoc>(MCP_HISTORY);
    const serverId = serverIdOfStream(recorded.streamId);
    const actorId = recorded.metadata.actorId;
    switch (event.type) {
      case 'McpToolCallRequested': {
        const d = event.data;
        // $setOnInsert: the outcome may have been projected first only if redelivered; never overwrite it.
        await history.updateOne(
          { _id: docId(serverId, d.requestId) },
          { $setOnInsert: { ...base(serverId, recorded.revision, d.at, actorId), kind: 'tool_call', toolName: d.toolName, arguments: d.arguments, source: d.source, processId: d.processId, nodeId: d.nodeId } },
          { upsert: true },
        );
        return;
      }
      case 'McpResourceReadRequested': {
        const d = event.data;
        await history.updateOne(
          { _id: docId(serverId, d.requestId) },
          { $setOnInsert: { ...base(serverId, recorded.revision, d.at, actorId), kind: 'resource_read', uri: d.uri } },
          { upsert: true },
        );
        return;
      }
      case 'McpToolCallProgressed':
        // $inc is not idempotent by itself: the revision guard makes a redelivery count nothing.
        await history.updateOne(
          { _id: docId(serverId, event.data.requestId), status: 'pending', $or: [{ progressSeq: { $lt: recorded.revision } }, { progressSeq: { $exists: false } }] },
          { $inc: { progressCount: 1 }, $set: { progressSeq: recorded.revision } },
        );
        return;
      case 'McpToolCallCompleted': {
        const d = event.data;
        await history.updateOne(
          { _id: docId(serverId, d.requestId) },
          { $set: { status: 'completed', isError: d.isError, content: d.content, text: d.text, structuredContent: d.structuredContent, truncated: d.truncated, durationMs: d.durationMs, finishedAt: d.at } },
        );
        return;
      }
      case 'McpToolCallFailed': {
        const d = event.data;
        await history.updateOne({ _id: docId(serverId, d.requestId) }, { $set: { status: 'failed', error: d.error, durationMs: d.durationMs, finishedAt: d.at } });
        return;
      }
      case 'McpResourceRead': {
        const d = event.data;
        await history.updateOne({ _id: docId(serverId, d.requestId) }, { $set: { status: 'completed', content: d.contents, truncated: d.truncated, durationMs: d.durationMs, finishedAt: d.at } });
        return;
      }
      case 'McpRequestFailed': {
        const d = event.data;
        if (d.operation !== 'resource_read') return;
        await history.updateOne({ _id: docId(serverId, d.requestId) }, { $set: { status: 'failed', error: d.error, finishedAt: d.at } });
        return;
      }
      default:
        return;
    }
  },
};

/** A server's history, newest first. Does not check who asks: callers check the server first. */
export async function listMcpHistory(readStore: ReadStore, serverId: string, options: { limit: number; cursor?: string | null; kind?: 'tool_call' | 'resource_read' }): Promise<Page<McpHistoryEntry>> {
  const filter: Record<string, unknown> = { serverId };
  if (options.kind) filter.kind = options.kind;
  const page = await readStore.collection<McpHistoryDoc>(MCP_HISTORY).page(filter, { sort: { seq: -1 }, limit: options.limit, cursor: options.cursor ?? null });
  return { items: page.items.map(historyEntryOf), nextCursor: page.nextCursor };
}
