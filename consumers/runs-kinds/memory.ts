import { loadRun } from '../../commands/runs.js';
import { memoryOperationSchema, type MemoryOperation } from '../../domain/memory/index.js';
import { renderTemplate, renderValueAsText, type NodeKind, type NodeKindContext, type RunNode } from '../../domain/runs/index.js';
import { checkMemoryLimits, runMemoryOperation, type MemoryActor, type MemoryOperationResult, type MemoryPorts } from '../../commands/memory-operations.js';
import type { Clock } from '../../ports/clock.js';
import type { EventStore } from '../../ports/event-store.js';
import type { Projections } from '../../ports/projections.js';
import type { RunSettings } from '../../ports/runs.js';
import { NodeKindError } from './webhook.js';

/**
 * `data.nodeType: "memory"`: one memory operation (the same as POST /api/db/memory) during a run.
 * - the memories belong to the flow owner's tenant (the run's owner, organization, workspace),
 *   and the change history says `source: run:<processId>`, by the user who started the run;
 * - text, query, memoryId, scope values and string values of metadata and filters are templates
 *   over the node's context; text (save) and query (search) default to the previous output;
 * - scope defaults: userId = the flow owner's id unless given (save and search); save records
 *   runId = the run's processId unless given. Update and delete use only the scope they name,
 *   and delete without memoryId deletes exactly the scope the node names;
 * - output: search → the texts of the results, one per line (`resultFormat: "json"`: the results
 *   as JSON), with the scored results in metadata; save/update → the memory; delete → the count
 *   and ids. A rendered operation that breaks a rule fails the node with MEMORY_INVALID_INPUT.
 */
type Data = RunNode['data'] & {
  memoryOperation?: string;
  text?: string;
  query?: string;
  memoryId?: string;
  scope?: Record<string, string | undefined>;
  filters?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  limit?: number;
  resultFormat?: 'text' | 'json';
};

const previousText = (context: NodeKindContext) => renderValueAsText((context as { previous?: unknown }).previous);

/** Renders every string inside a JSON value (object values, array items) as a template. */
function renderStrings(value: unknown, context: NodeKindContext): unknown {
  if (typeof value === 'string') return renderTemplate(value, context);
  if (Array.isArray(value)) return value.map((v) => renderStrings(v, context));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderStrings(v, context)]));
  return value;
}

function renderScope(scope: Data['scope'], context: NodeKindContext): Record<string, string> {
  const rendered: Record<string, string> = {};
  for (const [field, template] of Object.entries(scope ?? {})) {
    if (typeof template !== 'string') continue;
    const value = renderTemplate(template, context).trim();
    if (value !== '') rendered[field] = value;
  }
  return rendered;
}

export function memoryOperationOf(data: Data, context: NodeKindContext, ownerId: string): unknown {
  const scope = renderScope(data.scope, context);
  const render = (template: string | undefined) => (template === undefined ? undefined : renderTemplate(template, context));
  switch (data.memoryOperation) {
    case 'save':
      return {
        operation: 'save',
        scope: { userId: ownerId, runId: context.processId, ...scope },
        text: data.text !== undefined ? render(data.text) : previousText(context),
        ...(data.metadata ? { metadata: renderStrings(data.metadata, context) } : {}),
      };
    case 'search':
      return {
        operation: 'search',
        scope: { userId: ownerId, ...scope },
        query: data.query !== undefined ? render(data.query) : previousText(context),
        ...(data.filters ? { filters: renderStrings(data.filters, context) } : {}),
        ...(data.limit !== undefined ? { limit: data.limit } : {}),
      };
    case 'update':
      return {
        operation: 'update',
        memoryId: render(data.memoryId)?.trim(),
        ...(Object.keys(scope).length ? { scope } : {}),
        ...(data.text !== undefined ? { text: render(data.text) } : {}),
        ...(data.metadata ? { metadata: renderStrings(data.metadata, context) } : {}),
      };
    case 'delete': {
      const memoryId = render(data.memoryId)?.trim();
      return { operation: 'delete', ...(memoryId ? { memoryId } : {}), ...(Object.keys(scope).length ? { scope } : {}) };
    }
    default:
      throw new NodeKindError('MEMORY_INVALID_INPUT', `unknown memoryOperation ${JSON.stringify(data.memoryOperation)}`);
  }
}

function outputOf(result: MemoryOperationResult, format: 'text' | 'json'): { output: unknown; metadata: Record<string, unknown> } {
  switch (result.operation) {
    case 'search': {
      const results = result.results.map((r) => ({ id: r.id, text: r.text, score: r.score, scores: r.scores, metadata: r.metadata, scope: r.scope }));
      const meta = { operation: 'search', results, ranking: result.ranking, candidatesScanned: result.candidatesScanned, truncated: result.truncated, ...(result.warning ? { warning: result.warning } : {}) };
      return { output: format === 'json' ? results : results.map((r) => r.text).join('\n'), metadata: meta };
    }
    case 'save':
    case 'update':
      return { output: result.memory, metadata: { operation: result.operation, memoryId: result.memory.id } };
    case 'delete':
      return { output: { deleted: result.deleted, memoryIds: result.memoryIds }, metadata: { operation: 'delete', deleted: result.deleted, more: result.more } };
  }
}

/** What the memory kind uses: the run's log and clock, the memory context's ports, and read-your-writes. */
export interface MemoryKindPorts {
  eventStore: EventStore;
  clock: Clock;
  memory: MemoryPorts;
  projections: Pick<Projections, 'waitFor'>;
  settings: Pick<RunSettings, 'READ_YOUR_WRITES_TIMEOUT_MS'>;
}

export function memoryKind(ports: MemoryKindPorts): NodeKind {
  return {
    type: 'memory',
    async execute(node, context) {
      const data = node.data as Data;
      const run = await loadRun(ports.eventStore, context.processId);
      const parsed = memoryOperationSchema.safeParse(memoryOperationOf(data, context, run.ownerId));
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
        throw new NodeKindError('MEMORY_INVALID_INPUT', `the rendered memory operation is invalid: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { problems });
      }
      const op: MemoryOperation = parsed.data;
      checkMemoryLimits(ports.memory.settings, op, 'data');
      const actor: MemoryActor = {
        tenant: { userId: run.ownerId, orgId: run.orgId, workspaceId: run.workspaceId },
        context: {
          actorId: run.requestedBy ?? run.ownerId, orgId: run.orgId, workspaceId: run.workspaceId,
          correlationId: context.processId, causationId: null, requestId: null, now: ports.clock.now(),
        },
        source: `run:${context.processId}`,
        // A later node (or the next run) must find what this one saved.
        settle: async (position, streamId) => {
          if (position !== null) await ports.projections.waitFor(position, streamId, ports.settings.READ_YOUR_WRITES_TIMEOUT_MS);
        },
        signal: context.signal,
      };
      const result = await runMemoryOperation(ports.memory, actor, op);
      return outputOf(result, data.resultFormat === 'json' ? 'json' : 'text');
    },
  };
}
