import { Ajv } from 'ajv';
import {
  appStreamId, contractMismatches, flowGraphForContract, MAX_CONTRACT_BYTES,
  type AppContract, type AppState, type AppTenant, type ContractMismatch,
} from '../domain/apps/index.js';
import { flowDecider, flowNotFound, flowStreamId, isVisibleTo } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { executeAppCommand, loadVisibleApp } from './apps.js';
import { executeFlowCommand } from './flows.js';
import { loadState, type CommandContext } from './handle.js';

/**
 * The app's backend: its I/O contract (two JSON Schemas checked by a real validator, ajv) and its
 * linked flow (link one the caller can run, unlink, or create one matching the contract).
 */

/** Draft-07 (ajv's default) with unknown keywords allowed: a contract is any valid JSON Schema, annotations included. */
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: true, addUsedSchema: false });

function schemaProblem(side: 'input' | 'output', message: string, extra: Record<string, unknown> = {}): DomainError {
  return new DomainError('APP_CONTRACT_INVALID', `contract.${side}: ${message}`, 'invalid', { field: `body.${side}`, side, fields: [{ field: `body.${side}`, message }], ...extra });
}

/** Refuses a contract whose schemas are not valid JSON Schemas (ajv's meta-schema, then compilation: unresolvable `$ref`s, bad patterns). */
export function checkContract(contract: AppContract): void {
  if (Buffer.byteLength(JSON.stringify(contract)) > MAX_CONTRACT_BYTES) {
    throw new DomainError('APP_CONTRACT_TOO_LARGE', `a contract holds at most ${MAX_CONTRACT_BYTES} bytes as JSON`, 'too_large', { field: 'body', max: MAX_CONTRACT_BYTES });
  }
  for (const side of ['input', 'output'] as const) {
    const schema = contract[side];
    if (!ajv.validateSchema(schema)) {
      const errors = (ajv.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'is invalid' }));
      throw schemaProblem(side, `not a valid JSON Schema: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    try {
      ajv.compile(schema);
    } catch (err) {
      throw schemaProblem(side, `not a usable JSON Schema: ${(err as Error).message}`);
    } finally {
      // Compiled only to check it: drop it from ajv's cache, which would otherwise keep every body ever sent.
      ajv.removeSchema(schema);
    }
    if (schema.type !== undefined && schema.type !== 'object') throw schemaProblem(side, 'must describe an object (type "object"): the app sends and receives JSON objects');
  }
}

/** Where the app's linked flow does not match its contract; `linked: false` when no flow is linked (or it is gone). */
export async function contractReport(store: EventStore, app: Pick<AppState, 'contract' | 'flowId'>, tenant: AppTenant): Promise<{ linked: boolean; flowId: string | null; matches: boolean; mismatches: ContractMismatch[] }> {
  if (!app.flowId) return { linked: false, flowId: null, matches: false, mismatches: [] };
  const { state } = await loadState(store, flowStreamId(app.flowId), flowDecider);
  if (!state.exists || state.deleted || !isVisibleTo(state, tenant)) return { linked: false, flowId: app.flowId, matches: false, mismatches: [] };
  const mismatches = contractMismatches(app.contract, state.nodes.map((n) => ({ id: n.id, data: n.data as Record<string, unknown> })));
  return { linked: true, flowId: app.flowId, matches: mismatches.length === 0, mismatches };
}

export async function saveContract(store: EventStore, context: CommandContext, appId: string, tenant: AppTenant, contract: AppContract, expectedRevision?: number) {
  checkContract(contract);
  return executeAppCommand(store, context, { type: 'ChangeAppContract', appId, tenant, by: context.actorId, contract }, expectedRevision);
}

/** A flow the caller can run: it exists, is not deleted, and is in the caller's tenant (else 404 FLOW_NOT_FOUND, as runs answer). */
export async function requireRunnableFlow(store: EventStore, flowId: string, tenant: AppTenant) {
  const { state, revision } = await loadState(store, flowStreamId(flowId), flowDecider);
  if (!state.exists || state.deleted || !isVisibleTo(state, tenant)) throw flowNotFound();
  return { state, revision };
}

export async function linkFlow(store: EventStore, context: CommandContext, appId: string, tenant: AppTenant, flowId: string, expectedRevision?: number) {
  await loadVisibleApp(store, appId, tenant);
  await requireRunnableFlow(store, flowId, tenant);
  return executeAppCommand(store, context, { type: 'LinkAppFlow', appId, tenant, by: context.actorId, flowId }, expectedRevision);
}

export function unlinkFlow(store: EventStore, context: CommandContext, appId: string, tenant: AppTenant, expectedRevision?: number) {
  return executeAppCommand(store, context, { type: 'UnlinkAppFlow', appId, tenant, by: context.actorId }, expectedRevision);
}

/**
 * Creates a flow matching the app's contract (an input node checking the input schema, an output
 * node per output property) in the caller's tenant, then links it. The flow is created first: if the
 * link then fails, the flow stays, unlinked, like any flow the caller created.
 */
export async function createFlowForApp(
  store: EventStore,
  context: CommandContext,
  appId: string,
  tenant: AppTenant,
  ids: { flowId: string; newId(): string },
  options: { name?: string; expectedRevision?: number } = {},
) {
  const app = await loadVisibleApp(store, appId, tenant);
  if (options.expectedRevision !== undefined && options.expectedRevision !== app.version) {
    throw new DomainError('PRECONDITION_FAILED', `${appStreamId(appId)} is at version ${app.version}, not ${options.expectedRevision}`, 'precondition_failed', { expected: options.expectedRevision, actual: app.version });
  }
  const inputId = `input-${ids.newId().slice(0, 8)}`;
  const outputIds = new Map<string, string>();
  const graph = flowGraphForContract(app.contract, {
    input: inputId,
    output: (key) => {
      if (!outputIds.has(key)) outputIds.set(key, `output-${ids.newId().slice(0, 8)}`);
      return outputIds.get(key)!;
    },
  });
  const name = (options.name ?? `${app.name} backend`).slice(0, 200);
  const flow = await executeFlowCommand(store, context, ids.flowId, {
    type: 'CreateFlow', flowId: ids.flowId, name, description: `Backend of app ${app.name} (${appId}), made from its contract`,
    ownerId: tenant.userId, orgId: tenant.orgId, workspaceId: tenant.workspaceId, nodes: graph.nodes, edges: graph.edges,
  });
  const linked = await executeAppCommand(store, context, { type: 'LinkAppFlow', appId, tenant, by: context.actorId, flowId: ids.flowId }, app.version);
  return { flow, linked };
}
