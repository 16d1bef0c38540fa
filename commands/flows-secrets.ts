import {
  flowDecider,
  flowEventHasClearSecrets,
  flowStreamId,
  hasSecrets,
  mapFlowEventNodeData,
  sealClearSecrets,
  type FlowNode,
} from '../domain/flows/index.js';
import { FLOW_SECRETS_SCHEMA_VERSION } from '../domain/flows/upcasters.js';
import type { EventStore } from '../ports/event-store.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import type { StoredEvents } from '../ports/stored-events.js';
import { executeFlowCommand } from './flows.js';
import { loadState, type CommandContext } from './handle.js';

/**
 * The operators' reseal of node secrets written in clear, before sealing existed
 * (`POST /admin/flows/secrets/reseal`). Reads already show those secrets masked and runs get them
 * sealed (the upcasters); this removes them from the log itself where the store allows it:
 * 1. scan the `flow` and `run` categories as stored for events holding a secret in clear (runs
 *    hold a snapshot of the flow's nodes in RunRequested);
 * 2. where the store can (SQLite), re-write each such event in place with the secrets sealed
 *    (schema version 2), wiping the old bytes; EventStoreDB is append-only and keeps them;
 * 3. append one FlowSecretsResealed per affected flow, carrying its nodes' secrets sealed (it also
 *    re-projects the flow, so a read model written by an older version loses its clear values).
 *    Run streams get no event: a finished run's snapshot is history, only re-written in place.
 * Running it again finds nothing on SQLite, and on EventStoreDB skips flows resealed since their
 * last clear event.
 */
export interface ResealPorts {
  eventStore: EventStore;
  storedEvents: StoredEvents;
  sealer: Pick<SecretSealer, 'seal'>;
}

export interface ResealedFlow {
  flowId: string;
  /** Events of the flow that held a secret in clear. */
  clearEvents: number;
  /** How many of them were re-written in place (0 on an append-only store). */
  rewrittenEvents: number;
  /** Revision of the FlowSecretsResealed event appended. */
  revision: number;
}

export interface ResealReport {
  adapter: string;
  /** Whether this store re-writes old events in place (SQLite) or keeps them (EventStoreDB). */
  rewritesInPlace: boolean;
  scannedEvents: number;
  flows: ResealedFlow[];
  /** Run snapshots (RunRequested) that held node secrets in clear. */
  runs: { streams: number; clearEvents: number; rewrittenEvents: number };
  /** Position of the last event appended (for read-your-writes), null when nothing was. */
  position: number | null;
}

const PAGE = 500;

type ClearEvent = { position: number; revision: number; type: string; data: unknown };
interface Found {
  clear: ClearEvent[];
  resealedAt: number;
}

async function findClearEvents(stored: StoredEvents): Promise<{ scanned: number; byFlow: Map<string, Found>; runs: Map<string, ClearEvent[]> }> {
  const byFlow = new Map<string, Found>();
  const runs = new Map<string, ClearEvent[]>();
  let after = 0;
  let scanned = 0;
  for (;;) {
    const page = await stored.read({ after, maxCount: PAGE, categories: ['flow', 'run'] });
    if (page.length === 0) break;
    for (const event of page) {
      scanned += 1;
      const isFlow = event.streamId.startsWith('flow-');
      const flowId = event.streamId.slice('flow-'.length);
      if (isFlow && event.type === 'FlowSecretsResealed') {
        const found = byFlow.get(flowId);
        if (found) found.resealedAt = event.revision;
      } else if (flowEventHasClearSecrets(event.type, event.data)) {
        const clear = { position: event.position, revision: event.revision, type: event.type, data: event.data };
        if (!isFlow) {
          runs.set(event.streamId, [...(runs.get(event.streamId) ?? []), clear]);
          continue;
        }
        const found = byFlow.get(flowId) ?? { clear: [], resealedAt: -1 };
        found.clear.push(clear);
        byFlow.set(flowId, found);
      }
    }
    after = page[page.length - 1].position;
  }
  return { scanned, byFlow, runs };
}

const sealedVersionOf = (events: ClearEvent[], seal: (plaintext: string) => string) =>
  events.map((e) => ({
    position: e.position,
    data: mapFlowEventNodeData(e.type, e.data, (d) => sealClearSecrets(d, seal)),
    schemaVersion: FLOW_SECRETS_SCHEMA_VERSION,
  }));

/** The secret-bearing fields of each node that has secrets, sealed. */
function sealedSecretsOf(nodes: FlowNode[], seal: (plaintext: string) => string) {
  return nodes
    .filter((n) => hasSecrets(n.data))
    .map((n) => {
      const data = sealClearSecrets(n.data, seal);
      return {
        nodeId: n.id,
        data: { ...(data.webhookConfig !== undefined && { webhookConfig: data.webhookConfig }), ...(data.variables !== undefined && { variables: data.variables }) },
      };
    });
}

export async function resealFlowSecrets(ports: ResealPorts, context: CommandContext): Promise<ResealReport> {
  const seal = (plaintext: string) => ports.sealer.seal(plaintext);
  const { rewrite } = ports.storedEvents;
  const { scanned, byFlow, runs } = await findClearEvents(ports.storedEvents);
  const flows: ResealedFlow[] = [];
  let position: number | null = null;
  for (const [flowId, found] of byFlow) {
    const lastClear = found.clear[found.clear.length - 1].revision;
    // Append-only store: the clear events stay, and one reseal after them is all that can be done.
    if (!rewrite && found.resealedAt > lastClear) continue;
    if (rewrite) await rewrite(sealedVersionOf(found.clear, seal));
    const { state } = await loadState(ports.eventStore, flowStreamId(flowId), flowDecider);
    if (!state.exists) continue;
    const result = await executeFlowCommand(ports.eventStore, context, flowId, {
      type: 'ResealFlowSecrets',
      nodes: sealedSecretsOf(state.nodes, seal),
      clearEvents: found.clear.length,
      rewrittenInPlace: rewrite !== null,
    });
    position = result.position ?? position;
    flows.push({ flowId, clearEvents: found.clear.length, rewrittenEvents: rewrite ? found.clear.length : 0, revision: result.revision });
  }
  const runEvents = [...runs.values()].flat();
  if (rewrite) await rewrite(sealedVersionOf(runEvents, seal));
  const runReport = { streams: runs.size, clearEvents: runEvents.length, rewrittenEvents: rewrite ? runEvents.length : 0 };
  return { adapter: ports.storedEvents.adapter, rewritesInPlace: rewrite !== null, scannedEvents: scanned, flows, runs: runReport, position };
}
