import {
  APP_INSTANCE_CATEGORY,
  evolveAppInstance,
  initialAppInstanceState,
  isInstanceVisibleTo,
  jsonBytes,
  type AppInstanceEvent,
  type AppInstanceState,
  type AppInstanceType,
} from '../domain/app-instances/index.js';
import type { FlowScope } from '../domain/flows/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/**
 * Read model of app instances (`app_instances`): one document per live instance. The fields lists
 * filter and sort on are plain fields; the folded state (data, files, conversation) is kept as JSON
 * text in `state`, because the data is user-shaped (keys with `$` or dots, which FerretDB refuses).
 * Projecting is "parse, evolve, write back", guarded by the stream revision so a redelivered event
 * changes nothing; a deleted instance's document is removed.
 */
export interface AppInstanceDoc extends Doc {
  type: AppInstanceType;
  name: string;
  appId: string | null;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  linkedFlowIds: string[];
  fileCount: number;
  messageCount: number;
  dataBytes: number;
  createdAt: string;
  updatedAt: string;
  version: number;
  state: string;
}

export const APP_INSTANCES = 'app_instances';

function docOf(s: AppInstanceState): AppInstanceDoc {
  return {
    _id: s.instanceId,
    type: s.type,
    name: s.name,
    appId: s.appId,
    ownerId: s.ownerId,
    orgId: s.orgId,
    workspaceId: s.workspaceId,
    linkedFlowIds: s.linkedFlowIds,
    fileCount: s.files.length,
    messageCount: s.conversation.length,
    dataBytes: jsonBytes(s.data),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    version: s.version,
    state: JSON.stringify(s),
  };
}

export const appInstancesProjector: Projector = {
  name: 'app-instances',
  categories: [APP_INSTANCE_CATEGORY],
  ...ownedCollections({
    [APP_INSTANCES]: [{ keys: { orgId: 1, workspaceId: 1, createdAt: -1 } }, { keys: { ownerId: 1, createdAt: -1 } }],
  }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & AppInstanceEvent;
    const instances = store.collection<AppInstanceDoc>(APP_INSTANCES);
    const instanceId = recorded.streamId.slice(APP_INSTANCE_CATEGORY.length + 1);
    if (event.type === 'AppInstanceDeleted') {
      await instances.deleteOne({ _id: instanceId });
      return;
    }
    let state: AppInstanceState;
    if (event.type === 'AppInstanceCreated') {
      const existing = await instances.findOne({ _id: instanceId }, { projection: { version: 1 } });
      if (existing && existing.version >= recorded.revision) return;
      state = initialAppInstanceState;
    } else {
      const doc = await instances.findOne({ _id: instanceId });
      // Missing: deleted meanwhile (a redelivery after the delete), or a rebuild reached the delete already.
      if (!doc || doc.version >= recorded.revision) return;
      state = JSON.parse(doc.state) as AppInstanceState;
    }
    const next = { ...evolveAppInstance(state, event), version: recorded.revision };
    await instances.replaceOne({ _id: instanceId }, docOf(next), { upsert: true });
  },
};

export const appInstanceProjectors: Projector[] = [appInstancesProjector];

export const appInstanceStateOf = (doc: AppInstanceDoc) => JSON.parse(doc.state) as AppInstanceState;

function scopeFilter(scope: FlowScope) {
  return scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };
}

/** The tenant's instances, newest first, optionally of one type (summaries: no data, no conversation). */
export function pageAppInstances(store: ReadStore, scope: FlowScope, options: { type?: string; limit: number; cursor?: string | null }) {
  const filter = { ...scopeFilter(scope), ...(options.type ? { type: options.type } : {}) };
  return store.collection<AppInstanceDoc>(APP_INSTANCES).page(filter, { sort: { createdAt: -1 }, limit: options.limit, cursor: options.cursor ?? null, projection: { state: 0 } });
}

/** The instance as the read model has it, or null when missing, deleted or outside the scope. */
export async function getAppInstance(store: ReadStore, instanceId: string, scope: FlowScope): Promise<AppInstanceState | null> {
  const doc = await store.collection<AppInstanceDoc>(APP_INSTANCES).findOne({ _id: instanceId });
  if (!doc || !isInstanceVisibleTo(doc, scope)) return null;
  return { ...appInstanceStateOf(doc), version: doc.version };
}
