import type { AppEvent, AppTenant } from '../domain/apps/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, Filter, Page, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/**
 * The read model of the apps context: `apps`, one summary document per app (no file contents:
 * those are read from the app's stream through commands/apps.ts `loadApp`). A deleted app stays as
 * a tombstone (`deleted: true`), out of lists.
 */
export const APPS = 'apps';

export interface AppDoc extends Doc {
  name: string;
  description: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  flowId: string | null;
  fileCount: number;
  totalBytes: number;
  versionCount: number;
  /** Decoded bytes by path, as JSON text (paths hold dots, which field names should not). */
  sizes?: string;
  deleted: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export const appsProjector: Projector = {
  name: 'apps',
  categories: ['app'],
  ...ownedCollections({ [APPS]: [{ keys: { orgId: 1, workspaceId: 1, ownerId: 1, deleted: 1, updatedAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & AppEvent;
    const apps = store.collection<AppDoc>(APPS);
    const id = recorded.streamId.slice('app-'.length);
    // Guarded by version so a redelivered event (at-least-once) changes nothing.
    const newer = { _id: id, version: { $lt: recorded.revision } };
    const touch = { version: recorded.revision, updatedAt: event.data.at };
    switch (event.type) {
      case 'AppCreated': {
        const d = event.data;
        await apps.replaceOne(
          { _id: id },
          {
            _id: id, name: d.name, description: d.description, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, flowId: null,
            fileCount: 0, totalBytes: 0, versionCount: 0, deleted: false, version: recorded.revision, createdAt: d.at, updatedAt: d.at,
          },
          { upsert: true },
        );
        return;
      }
      case 'AppUpdated':
        await apps.updateOne(newer, { $set: { name: event.data.name, description: event.data.description, ...touch } });
        return;
      case 'AppDeleted':
        await apps.updateOne(newer, { $set: { deleted: true, ...touch } });
        return;
      case 'AppFilesChanged':
      case 'AppVersionRestored': {
        // The file count and size follow from the whole head: read the current summary and apply the change.
        const doc = await apps.findOne({ _id: id });
        if (!doc || doc.version >= recorded.revision) return;
        const sizes = headSizes(doc, event);
        const set: Record<string, unknown> = { fileCount: Object.keys(sizes).length, totalBytes: Object.values(sizes).reduce((a, b) => a + b, 0), sizes: JSON.stringify(sizes), ...touch };
        if (event.type === 'AppVersionRestored') set.flowId = event.data.flowId;
        await apps.updateOne(newer, { $set: set });
        return;
      }
      case 'AppContractChanged':
        await apps.updateOne(newer, { $set: touch });
        return;
      case 'AppFlowLinked':
        await apps.updateOne(newer, { $set: { flowId: event.data.flowId, ...touch } });
        return;
      case 'AppFlowUnlinked':
        await apps.updateOne(newer, { $set: { flowId: null, ...touch } });
        return;
      case 'AppVersionCreated':
        await apps.updateOne(newer, { $set: { versionCount: event.data.number, ...touch } });
        return;
    }
  },
};

/** Sizes by path after the event (kept in the summary as `sizes`, so the projector never reads the stream). */
function headSizes(doc: AppDoc, event: AppEvent): Record<string, number> {
  if (event.type === 'AppVersionRestored') return Object.fromEntries(event.data.files.map((f) => [f.path, f.size]));
  if (event.type !== 'AppFilesChanged') return {};
  const sizes: Record<string, number> = doc.sizes ? JSON.parse(doc.sizes) : {};
  for (const path of event.data.deleted) delete sizes[path];
  for (const f of event.data.put) sizes[f.path] = f.size;
  return sizes;
}

export const appsProjectors: Projector[] = [appsProjector];

/** The tenant part of every app query (the same rule as isAppVisibleTo). */
export function appTenantFilter(tenant: AppTenant): Filter {
  const filter: Filter = { orgId: tenant.orgId, workspaceId: tenant.workspaceId };
  if (tenant.orgId === null) filter.ownerId = tenant.userId;
  return filter;
}

export function listApps(store: ReadStore, tenant: AppTenant, options: { limit: number; cursor?: string | null }): Promise<Page<AppDoc>> {
  return store.collection<AppDoc>(APPS).page({ ...appTenantFilter(tenant), deleted: false }, { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null, projection: { sizes: 0 } });
}
