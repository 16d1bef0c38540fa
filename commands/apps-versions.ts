import { findAppVersion, type AppTenant } from '../domain/apps/index.js';
import { flowDecider, flowStreamId, isVisibleTo } from '../domain/flows/index.js';
import type { EventStore } from '../ports/event-store.js';
import { executeAppCommand, loadVisibleApp } from './apps.js';
import { loadState, type CommandContext } from './handle.js';

/**
 * Versions: a snapshot records the head's files (by content hash: every byte stays in the app's
 * stream), the contract, and the linked flow with its version (the flow stream's revision, which
 * the flow's time travel turns back into that exact flow). A restore makes a snapshot the head
 * again as a new change; nothing is ever removed from the log.
 */
export async function createAppVersion(store: EventStore, context: CommandContext, appId: string, tenant: AppTenant, ids: { versionId: string }, label: string | null, expectedRevision?: number) {
  const app = await loadVisibleApp(store, appId, tenant);
  let flowVersion: number | null = null;
  if (app.flowId) {
    const { state, revision } = await loadState(store, flowStreamId(app.flowId), flowDecider);
    flowVersion = state.exists && !state.deleted && isVisibleTo(state, tenant) ? revision : null;
  }
  const result = await executeAppCommand(store, context, { type: 'CreateAppVersion', appId, tenant, by: context.actorId, versionId: ids.versionId, label, flowVersion }, expectedRevision);
  return { result, version: findAppVersion(result.state, ids.versionId)! };
}

export async function restoreAppVersion(store: EventStore, context: CommandContext, appId: string, tenant: AppTenant, versionId: string, expectedRevision?: number) {
  const result = await executeAppCommand(store, context, { type: 'RestoreAppVersion', appId, tenant, by: context.actorId, versionId }, expectedRevision);
  return { result, restored: result.events.length > 0 };
}
