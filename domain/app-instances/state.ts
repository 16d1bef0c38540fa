import type { FlowScope } from '../flows/index.js';
import type { AppInstanceEvent, AppInstanceType, InstanceFile, JsonObject, MessageRole } from './events.js';
import { applyDataOps } from './json-ops.js';

export interface InstanceMessage {
  messageId: string;
  role: MessageRole;
  content: string;
  by: string | null;
  at: string;
}

export interface AppInstanceState {
  exists: boolean;
  deleted: boolean;
  instanceId: string;
  type: AppInstanceType;
  name: string;
  appId: string | null;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  data: JsonObject;
  files: InstanceFile[];
  linkedFlowIds: string[];
  conversation: InstanceMessage[];
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** Revision of the stream's last event (the ETag); -1 before the first. */
  version: number;
}

export const initialAppInstanceState: AppInstanceState = {
  exists: false,
  deleted: false,
  instanceId: '',
  type: 'kanban',
  name: '',
  appId: null,
  ownerId: '',
  orgId: null,
  workspaceId: null,
  data: {},
  files: [],
  linkedFlowIds: [],
  conversation: [],
  createdBy: null,
  createdAt: '',
  updatedAt: '',
  version: -1,
};

/** Who may see an instance: its organization's workspace, or (personal instances) only its owner. The flows' rule. */
export function isInstanceVisibleTo(state: Pick<AppInstanceState, 'ownerId' | 'orgId' | 'workspaceId'>, scope: FlowScope): boolean {
  if (state.orgId !== scope.orgId || state.workspaceId !== scope.workspaceId) return false;
  return state.orgId !== null || state.ownerId === scope.userId;
}

export function evolveAppInstance(state: AppInstanceState, event: AppInstanceEvent): AppInstanceState {
  const version = state.version + 1;
  switch (event.type) {
    case 'AppInstanceCreated': {
      const d = event.data;
      return {
        ...initialAppInstanceState,
        exists: true,
        instanceId: d.instanceId,
        type: d.type,
        name: d.name,
        appId: d.appId,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        data: d.data as JsonObject,
        linkedFlowIds: d.linkedFlowIds,
        createdBy: d.createdBy,
        createdAt: d.at,
        updatedAt: d.at,
        version,
      };
    }
    case 'AppInstanceReplaced':
      return { ...state, name: event.data.name, appId: event.data.appId, data: event.data.data as JsonObject, linkedFlowIds: event.data.linkedFlowIds, updatedAt: event.data.at, version };
    case 'AppInstanceDataPatched':
      return { ...state, data: applyDataOps(state.data, event.data.ops) as JsonObject, updatedAt: event.data.at, version };
    case 'AppInstanceFileAdded':
      return { ...state, files: [...state.files.filter((f) => f.path !== event.data.path), event.data], updatedAt: event.data.at, version };
    case 'AppInstanceFileRemoved':
      return { ...state, files: state.files.filter((f) => f.path !== event.data.path), updatedAt: event.data.at, version };
    case 'AppInstanceMessageAdded': {
      const { messageId, role, content, by, at } = event.data;
      return { ...state, conversation: [...state.conversation, { messageId, role, content, by, at }], updatedAt: at, version };
    }
    case 'AppInstanceDeleted':
      return { ...state, deleted: true, updatedAt: event.data.at, version };
  }
}

/** The JSON Pointers a recorded event changed in the data: `''` (everything) for a replacement, none for events outside the data. */
export function changedDataPaths(event: AppInstanceEvent): string[] {
  switch (event.type) {
    case 'AppInstanceCreated':
    case 'AppInstanceReplaced':
      return [''];
    case 'AppInstanceDataPatched':
      return event.data.ops.map((o) => o.path);
    default:
      return [];
  }
}
