import type { AppContract, AppEvent, AppFile, AppFileRef } from './events.js';

/** Whose apps these are: the caller's tenancy, as flows have it (flowScopeOf). */
export interface AppTenant {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export interface AppVersion {
  versionId: string;
  /** 1, 2, 3… in the order they were taken. */
  number: number;
  label: string | null;
  /** When it was taken; never changes (restores and deploys do not touch it). */
  createdAt: string;
  createdBy: string | null;
  /** The app's version (stream revision) whose head the snapshot records (the one before the snapshot's own event). */
  appVersion: number;
  files: AppFileRef[];
  contract: AppContract;
  flowId: string | null;
  /** The linked flow's version (its stream revision) at that moment: the flow's time travel gives it back exactly. */
  flowVersion: number | null;
}

/** A version with every file's content: what a deploy builds and a restore brings back. */
export interface AppSnapshot {
  versionId: string;
  number: number;
  label: string | null;
  createdAt: string;
  files: AppFile[];
  contract: AppContract;
  flowId: string | null;
  flowVersion: number | null;
}

export interface AppState {
  exists: boolean;
  deleted: boolean;
  appId: string;
  name: string;
  description: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** The head's files by normalised path, with contents. */
  files: Record<string, AppFile>;
  /** Decoded bytes of the head's files. */
  totalBytes: number;
  contract: AppContract;
  flowId: string | null;
  versions: AppVersion[];
  /**
   * Every content this stream ever carried, by `<encoding>:<sha256>`: snapshots name contents by
   * hash, and nothing in the stream is ever destroyed, so a restore finds every byte again.
   */
  contents: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  /** Revision of the stream's last event (-1 before the first): the app's `version`, its ETag and If-Match. */
  version: number;
}

export const EMPTY_CONTRACT: AppContract = Object.freeze({
  input: { type: 'object', properties: {} },
  output: { type: 'object', properties: {} },
}) as AppContract;

export const initialAppState: AppState = {
  exists: false, deleted: false, appId: '', name: '', description: '', ownerId: '', orgId: null, workspaceId: null,
  files: {}, totalBytes: 0, contract: EMPTY_CONTRACT, flowId: null, versions: [], contents: {}, createdAt: '', updatedAt: '', version: -1,
};

export const contentKey = (ref: Pick<AppFileRef, 'encoding' | 'sha256'>) => `${ref.encoding}:${ref.sha256}`;

function sortedFiles(files: Record<string, AppFile>): Record<string, AppFile> {
  const out: Record<string, AppFile> = {};
  for (const path of Object.keys(files).sort()) out[path] = files[path];
  return out;
}

const totalOf = (files: Record<string, AppFile>) => Object.values(files).reduce((sum, f) => sum + f.size, 0);

/** A manifest's files with their contents from the stream's content store. */
export function filesOfManifest(refs: AppFileRef[], contents: Record<string, string>): Record<string, AppFile> {
  const files: Record<string, AppFile> = {};
  for (const ref of refs) {
    const content = contents[contentKey(ref)];
    if (content === undefined) throw new Error(`content ${contentKey(ref)} of ${ref.path} is not in the stream`);
    files[ref.path] = { ...ref, content };
  }
  return sortedFiles(files);
}

/** The head's files as a manifest, sorted by path. */
export function manifestOf(files: Record<string, AppFile>): AppFileRef[] {
  return Object.keys(files).sort().map((path) => {
    const { content: _content, ...ref } = files[path];
    return ref;
  });
}

export function evolveApp(state: AppState, event: AppEvent): AppState {
  const next = { version: state.version + 1, updatedAt: event.data.at };
  switch (event.type) {
    case 'AppCreated': {
      const d = event.data;
      return {
        ...initialAppState, exists: true, appId: d.appId, name: d.name, description: d.description, contract: d.contract,
        ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, createdAt: d.at, ...next,
      };
    }
    case 'AppUpdated':
      return { ...state, name: event.data.name, description: event.data.description, ...next };
    case 'AppDeleted':
      return { ...state, deleted: true, ...next };
    case 'AppFilesChanged': {
      const files = { ...state.files };
      const contents = { ...state.contents };
      for (const path of event.data.deleted) delete files[path];
      for (const file of event.data.put) {
        files[file.path] = file;
        contents[contentKey(file)] = file.content;
      }
      const sorted = sortedFiles(files);
      return { ...state, files: sorted, totalBytes: totalOf(sorted), contents, ...next };
    }
    case 'AppContractChanged':
      return { ...state, contract: event.data.contract, ...next };
    case 'AppFlowLinked':
      return { ...state, flowId: event.data.flowId, ...next };
    case 'AppFlowUnlinked':
      return { ...state, flowId: null, ...next };
    case 'AppVersionCreated': {
      const d = event.data;
      const version: AppVersion = {
        versionId: d.versionId, number: d.number, label: d.label, createdAt: d.at, createdBy: d.by, appVersion: state.version,
        files: d.files, contract: d.contract, flowId: d.flowId, flowVersion: d.flowVersion,
      };
      return { ...state, versions: [...state.versions, version], ...next };
    }
    case 'AppVersionRestored': {
      const files = filesOfManifest(event.data.files, state.contents);
      return { ...state, files, totalBytes: totalOf(files), contract: event.data.contract, flowId: event.data.flowId, ...next };
    }
    default:
      return state;
  }
}

export function findAppVersion(state: AppState, versionId: string): AppVersion | undefined {
  return state.versions.find((v) => v.versionId === versionId);
}

/** A version with its files' contents, byte for byte as they were when it was taken; undefined for an unknown id. */
export function appVersionSnapshot(state: AppState, versionId: string): AppSnapshot | undefined {
  const v = findAppVersion(state, versionId);
  if (!v) return undefined;
  return {
    versionId: v.versionId, number: v.number, label: v.label, createdAt: v.createdAt,
    files: Object.values(filesOfManifest(v.files, state.contents)), contract: v.contract, flowId: v.flowId, flowVersion: v.flowVersion,
  };
}

/** Same rule as flows: the organization's workspace shares them; a personal one is its owner's alone. */
export function isAppVisibleTo(app: { ownerId: string; orgId: string | null; workspaceId: string | null }, tenant: AppTenant): boolean {
  if (app.orgId !== tenant.orgId || app.workspaceId !== tenant.workspaceId) return false;
  return app.orgId !== null || app.ownerId === tenant.userId;
}

export const appStreamId = (appId: string) => `app-${appId}`;
