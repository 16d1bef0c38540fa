import { createHash } from 'node:crypto';
import {
  appDecider, appNotFound, appStreamId, appVersionSnapshot, appVersionNotFound, isAppVisibleTo,
  type AppCommand, type AppFileEncoding, type AppFileInput, type AppSnapshot, type AppState, type AppTenant,
} from '../domain/apps/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, PreconditionFailedError, type CommandContext, type WithoutAt } from './handle.js';

export type { AppSnapshot, AppState, AppTenant };

/**
 * The folded state of an app (`app-<id>`) and its stream revision, through the handlers' cache.
 * `state.exists` is false for an unknown app; callers check `deleted` and tenancy themselves
 * (`loadVisibleApp` does both).
 */
export function loadApp(store: EventStore, appId: string): Promise<{ state: AppState; revision: number }> {
  return loadState(store, appStreamId(appId), appDecider);
}

/** The app as the tenant may see it, or 404 APP_NOT_FOUND (unknown, deleted or another tenant's). */
export async function loadVisibleApp(store: EventStore, appId: string, tenant: AppTenant): Promise<AppState> {
  const { state } = await loadApp(store, appId);
  if (!state.exists || state.deleted || !isAppVisibleTo(state, tenant)) throw appNotFound();
  return state;
}

/** A version's snapshot with every file's content, byte for byte; 404 APP_VERSION_NOT_FOUND for an unknown version. */
export async function loadAppVersion(store: EventStore, appId: string, versionId: string, tenant?: AppTenant): Promise<AppSnapshot> {
  const state = tenant ? await loadVisibleApp(store, appId, tenant) : (await loadApp(store, appId)).state;
  const snapshot = appVersionSnapshot(state, versionId);
  if (!snapshot) throw appVersionNotFound(versionId);
  return snapshot;
}

/** sha256 (hex) of a content's decoded bytes. */
export function sha256Of(content: string, encoding: AppFileEncoding): string {
  return createHash('sha256').update(Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8')).digest('hex');
}

/** Files as a client sends them, hashed for the decider (which cannot hash: the domain is pure). */
export function hashFiles(files: Array<{ path: string; content: string; encoding?: AppFileEncoding }>): AppFileInput[] {
  return files.map((f) => ({ path: f.path, content: f.content, encoding: f.encoding ?? 'utf8', sha256: sha256Of(f.content, f.encoding ?? 'utf8') }));
}

/**
 * Every app write goes through here: one stream per app, time from the context, `expectedRevision`
 * the client's If-Match. A 412 about an app the caller cannot see would reveal that it exists, so
 * it becomes the usual APP_NOT_FOUND.
 */
export async function executeAppCommand(store: EventStore, context: CommandContext, command: WithoutAt<AppCommand>, expectedRevision?: number) {
  try {
    return await handleAtContextTime(store, context, appStreamId(command.appId), appDecider, command, expectedRevision);
  } catch (err) {
    if (err instanceof PreconditionFailedError) {
      const { state } = await loadApp(store, command.appId);
      if (!state.exists || state.deleted || !isAppVisibleTo(state, command.tenant)) throw appNotFound();
    }
    throw err;
  }
}
