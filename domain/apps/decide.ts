import { decideByType, DomainError } from '../shared/decider.js';
import type { AppContract, AppEvent, AppFile, AppFileEncoding } from './events.js';
import {
  appPathError, BINARY_EXTENSIONS, decodedSize, extensionOf, MAX_APP_DESCRIPTION_LENGTH, MAX_APP_FILE_BYTES, MAX_APP_FILES,
  MAX_APP_NAME_LENGTH, MAX_APP_TOTAL_BYTES, MAX_APP_VERSIONS, MAX_APP_WRITE_BYTES, MAX_VERSION_LABEL_LENGTH, normaliseAppPath,
} from './limits.js';
import { findAppVersion, isAppVisibleTo, manifestOf, type AppState, type AppTenant } from './state.js';

interface Base {
  appId: string;
  tenant: AppTenant;
  by: string | null;
  at: string;
}

/** A file as a writer gives it: the raw path (the decider normalises it) and its hash, computed outside the pure domain. */
export interface AppFileInput {
  path: string;
  content: string;
  encoding: AppFileEncoding;
  sha256: string;
}

export type AppCommand =
  | (Base & { type: 'CreateApp'; name: string; description: string; contract: AppContract })
  | (Base & { type: 'UpdateApp'; name?: string; description?: string })
  | (Base & { type: 'DeleteApp' })
  | (Base & { type: 'ChangeAppFiles'; put: AppFileInput[]; delete: string[]; source: 'api' | 'builder' })
  | (Base & { type: 'ChangeAppContract'; contract: AppContract })
  | (Base & { type: 'LinkAppFlow'; flowId: string })
  | (Base & { type: 'UnlinkAppFlow' })
  | (Base & { type: 'CreateAppVersion'; versionId: string; label: string | null; flowVersion: number | null })
  | (Base & { type: 'RestoreAppVersion'; versionId: string });

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const appNotFound = () => new DomainError('APP_NOT_FOUND', 'app not found', 'not_found');
export const appVersionNotFound = (versionId: string) => new DomainError('APP_VERSION_NOT_FOUND', `app version ${versionId} not found`, 'not_found', { versionId });

function requireLive(state: AppState, tenant: AppTenant): void {
  if (!state.exists || state.deleted || !isAppVisibleTo(state, tenant)) throw appNotFound();
}

function checkName(name: string) {
  if (name.trim().length === 0) throw new DomainError('APP_NAME_REQUIRED', 'an app needs a name', 'invalid', { field: 'name' });
  if (name.length > MAX_APP_NAME_LENGTH) throw new DomainError('APP_NAME_TOO_LONG', `a name has at most ${MAX_APP_NAME_LENGTH} characters`, 'invalid', { field: 'name' });
}

function checkDescription(description: string) {
  if (description.length > MAX_APP_DESCRIPTION_LENGTH) throw new DomainError('APP_DESCRIPTION_TOO_LONG', `a description has at most ${MAX_APP_DESCRIPTION_LENGTH} characters`, 'invalid', { field: 'description' });
}

/**
 * The rules of one change of files, checked all before anything is written: every path
 * normalised and allowed, each path named once, binary types in base64, well-formed contents, each
 * file, the write and the resulting app within their limits. Returns the event's `put` and
 * `deleted` (unchanged files left out), or throws naming the first offending path.
 */
export function planFileChange(state: Pick<AppState, 'files'>, put: AppFileInput[], remove: string[]): { put: AppFile[]; deleted: string[] } {
  const seen = new Set<string>();
  const claim = (path: string, raw: string) => {
    if (seen.has(path)) throw new DomainError('APP_PATH_DUPLICATE', `path ${JSON.stringify(raw)} is named twice in one change`, 'invalid', { path: raw });
    seen.add(path);
  };
  const deleted: string[] = [];
  for (const raw of remove) {
    const path = normaliseAppPath(raw);
    claim(path, raw);
    if (!state.files[path]) throw new DomainError('APP_FILE_NOT_FOUND', `there is no file ${JSON.stringify(path)} to delete`, 'not_found', { path: raw });
    deleted.push(path);
  }
  const files: AppFile[] = [];
  let writeBytes = 0;
  for (const input of put) {
    const path = normaliseAppPath(input.path);
    claim(path, input.path);
    if (BINARY_EXTENSIONS.has(extensionOf(path)) && input.encoding !== 'base64') {
      throw new DomainError('APP_FILE_ENCODING', `${path} is binary: send its bytes as base64 (encoding: "base64")`, 'invalid', { path: input.path });
    }
    if (input.encoding === 'utf8' && LONE_SURROGATE.test(input.content)) {
      throw new DomainError('APP_FILE_CONTENT_INVALID', `${path} holds a lone surrogate: not valid UTF-8 text`, 'invalid', { path: input.path });
    }
    const size = decodedSize(input.content, input.encoding);
    if (size === null) throw new DomainError('APP_FILE_BASE64_INVALID', `${path}: content is not valid base64`, 'invalid', { path: input.path });
    if (size > MAX_APP_FILE_BYTES) throw appPathError('APP_FILE_TOO_LARGE', input.path, `${path} has ${size} bytes; a file has at most ${MAX_APP_FILE_BYTES}`);
    if (!/^[0-9a-f]{64}$/.test(input.sha256)) throw new Error(`sha256 of ${path} was not computed`);
    writeBytes += Buffer.byteLength(JSON.stringify(input.content));
    if (writeBytes > MAX_APP_WRITE_BYTES) throw appPathError('APP_WRITE_TOO_LARGE', input.path, `one change carries at most ${MAX_APP_WRITE_BYTES} bytes of content as JSON text (reached at ${path}); write a bigger app in several changes`);
    const current = state.files[path];
    if (current && current.sha256 === input.sha256 && current.encoding === input.encoding && current.content === input.content) continue;
    files.push({ path, encoding: input.encoding, sha256: input.sha256, size, content: input.content });
  }
  const after = { ...state.files };
  for (const path of deleted) delete after[path];
  for (const file of files) after[file.path] = file;
  const paths = Object.keys(after);
  if (paths.length > MAX_APP_FILES) {
    const extra = files.find((f) => !state.files[f.path]);
    throw appPathError('APP_TOO_MANY_FILES', extra?.path ?? paths[paths.length - 1], `an app has at most ${MAX_APP_FILES} files; this change would make ${paths.length}`);
  }
  const total = paths.reduce((sum, p) => sum + after[p].size, 0);
  if (total > MAX_APP_TOTAL_BYTES) {
    const biggest = [...files].sort((a, b) => b.size - a.size)[0];
    throw appPathError('APP_TOO_LARGE', biggest?.path ?? '', `an app holds at most ${MAX_APP_TOTAL_BYTES} bytes; this change would make ${total}`);
  }
  return { put: files, deleted };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const decideApp = decideByType<AppCommand, AppState, AppEvent>({
  CreateApp(c, state) {
    if (state.exists) throw new DomainError('APP_EXISTS', `app ${c.appId} already exists`, 'conflict');
    checkName(c.name);
    checkDescription(c.description);
    return [{
      type: 'AppCreated',
      data: { appId: c.appId, name: c.name, description: c.description, contract: c.contract, ownerId: c.tenant.userId, orgId: c.tenant.orgId, workspaceId: c.tenant.workspaceId, by: c.by, at: c.at },
    }];
  },
  UpdateApp(c, state) {
    requireLive(state, c.tenant);
    const name = c.name ?? state.name;
    const description = c.description ?? state.description;
    checkName(name);
    checkDescription(description);
    if (name === state.name && description === state.description) return [];
    return [{ type: 'AppUpdated', data: { appId: c.appId, name, description, by: c.by, at: c.at } }];
  },
  DeleteApp(c, state) {
    requireLive(state, c.tenant);
    return [{ type: 'AppDeleted', data: { appId: c.appId, by: c.by, at: c.at } }];
  },
  ChangeAppFiles(c, state) {
    requireLive(state, c.tenant);
    const plan = planFileChange(state, c.put, c.delete);
    if (plan.put.length === 0 && plan.deleted.length === 0) return [];
    return [{ type: 'AppFilesChanged', data: { appId: c.appId, put: plan.put, deleted: plan.deleted, source: c.source, by: c.by, at: c.at } }];
  },
  ChangeAppContract(c, state) {
    requireLive(state, c.tenant);
    if (sameJson(c.contract, state.contract)) return [];
    return [{ type: 'AppContractChanged', data: { appId: c.appId, contract: c.contract, by: c.by, at: c.at } }];
  },
  LinkAppFlow(c, state) {
    requireLive(state, c.tenant);
    if (state.flowId === c.flowId) return [];
    return [{ type: 'AppFlowLinked', data: { appId: c.appId, flowId: c.flowId, previousFlowId: state.flowId, by: c.by, at: c.at } }];
  },
  UnlinkAppFlow(c, state) {
    requireLive(state, c.tenant);
    if (state.flowId === null) throw new DomainError('APP_FLOW_NOT_LINKED', 'the app has no linked flow', 'conflict');
    return [{ type: 'AppFlowUnlinked', data: { appId: c.appId, previousFlowId: state.flowId, by: c.by, at: c.at } }];
  },
  CreateAppVersion(c, state) {
    requireLive(state, c.tenant);
    if (c.label !== null && c.label.length > MAX_VERSION_LABEL_LENGTH) throw new DomainError('APP_VERSION_LABEL_TOO_LONG', `a label has at most ${MAX_VERSION_LABEL_LENGTH} characters`, 'invalid', { field: 'label' });
    if (state.versions.length >= MAX_APP_VERSIONS) throw new DomainError('APP_TOO_MANY_VERSIONS', `an app keeps at most ${MAX_APP_VERSIONS} versions`, 'too_large');
    if (findAppVersion(state, c.versionId)) throw new DomainError('APP_VERSION_EXISTS', `version ${c.versionId} exists`, 'conflict');
    return [{
      type: 'AppVersionCreated',
      data: {
        appId: c.appId, versionId: c.versionId, number: state.versions.length + 1, label: c.label, files: manifestOf(state.files),
        contract: state.contract, flowId: state.flowId, flowVersion: state.flowId === null ? null : c.flowVersion, by: c.by, at: c.at,
      },
    }];
  },
  RestoreAppVersion(c, state) {
    requireLive(state, c.tenant);
    const version = findAppVersion(state, c.versionId);
    if (!version) throw appVersionNotFound(c.versionId);
    // Restoring what is already the head changes nothing: restoring twice is the same as once.
    if (sameJson(version.files, manifestOf(state.files)) && sameJson(version.contract, state.contract) && version.flowId === state.flowId) return [];
    return [{
      type: 'AppVersionRestored',
      data: { appId: c.appId, versionId: c.versionId, files: version.files, contract: version.contract, flowId: version.flowId, by: c.by, at: c.at },
    }];
  },
});
