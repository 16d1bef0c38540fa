import { createHash } from 'node:crypto';
import {
  APP_INSTANCE_LIMITS,
  APP_INSTANCE_TYPES,
  appInstanceDecider,
  appInstanceNotFound,
  appInstanceStreamId,
  changedDataPaths,
  isAppInstanceType,
  isInstanceVisibleTo,
  overlappingPaths,
  type AppInstanceCommand,
  type AppInstanceEvent,
  type AppInstanceState,
  type InstanceFile,
  type JsonObject,
  type MessageRole,
} from '../domain/app-instances/index.js';
import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, type FlowScope } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { ObjectStore } from '../ports/object-store.js';
import { loadVisibleApp } from './apps.js';
import { applyDataPatch, diffData, validateInstanceData, type DataPatch } from './app-instances-data.js';
import { ConflictError, handleCommand, loadState, PreconditionFailedError, type CommandContext, type HandleResult } from './handle.js';

/**
 * The write side of app instances (`appinstance-<id>`). Every command first checks the caller's
 * scope on the folded stream: an instance of another tenant, like a missing or deleted one, is
 * APP_INSTANCE_NOT_FOUND (404). Data is checked against the type's JSON Schema here (ajv lives in
 * commands/app-instances-data.ts), then by the decider (sizes, invariants).
 */
export interface AppInstancePorts {
  eventStore: EventStore;
  objects: ObjectStore;
  newId(): string;
}

type Result = HandleResult<AppInstanceState, AppInstanceEvent>;

export function loadInstance(store: EventStore, instanceId: string) {
  return loadState(store, appInstanceStreamId(instanceId), appInstanceDecider);
}

/** The instance when it exists, is not deleted and the scope may see it; else 404 APP_INSTANCE_NOT_FOUND. */
export async function requireInstance(store: EventStore, instanceId: string, scope: FlowScope): Promise<{ state: AppInstanceState; revision: number }> {
  const loaded = await loadInstance(store, instanceId);
  if (!loaded.state.exists || loaded.state.deleted || !isInstanceVisibleTo(loaded.state, scope)) throw appInstanceNotFound();
  return loaded;
}

function run(store: EventStore, context: CommandContext, instanceId: string, command: AppInstanceCommand, expectedRevision?: number): Promise<Result> {
  return handleCommand(store, { streamId: appInstanceStreamId(instanceId), decider: appInstanceDecider, command, context, expectedRevision });
}

/** Each linked flow must exist and be visible to the caller (404 FLOW_NOT_FOUND naming the field). */
async function checkLinkedFlows(store: EventStore, flowIds: string[], scope: FlowScope) {
  for (const [i, flowId] of flowIds.entries()) {
    const flow = (await loadState(store, flowStreamId(flowId), flowDecider)).state;
    if (!flow.exists || flow.deleted || !isVisibleTo(flow, scope)) {
      const err = flowNotFound();
      throw new DomainError(err.code, `linked flow ${flowId} not found`, 'not_found', { field: `body.linkedFlowIds.${i}`, flowId });
    }
  }
}

async function checkApp(store: EventStore, appId: string | null, scope: FlowScope) {
  if (appId !== null) await loadVisibleApp(store, appId, scope);
}

export interface InstanceInput {
  name: string;
  appId: string | null;
  /** Absent on create: the type's initial data. */
  data?: unknown;
  linkedFlowIds: string[];
}

export async function createAppInstance(ports: AppInstancePorts, context: CommandContext, scope: FlowScope, request: InstanceInput & { instanceId: string; type: string }): Promise<Result> {
  const store = ports.eventStore;
  if (!isAppInstanceType(request.type)) {
    throw new DomainError('UNKNOWN_INSTANCE_TYPE', `unknown instance type ${JSON.stringify(request.type)}; known: ${Object.keys(APP_INSTANCE_TYPES).join(', ')}`, 'invalid', {
      fields: [{ field: 'body.type', message: `must be one of ${Object.keys(APP_INSTANCE_TYPES).join(', ')}` }],
    });
  }
  const data = request.data === undefined ? APP_INSTANCE_TYPES[request.type].initialData() : validateInstanceData(request.type, request.data);
  await checkApp(store, request.appId, scope);
  await checkLinkedFlows(store, request.linkedFlowIds, scope);
  return run(store, { ...context, orgId: scope.orgId, workspaceId: scope.workspaceId }, request.instanceId, {
    type: 'CreateAppInstance',
    instanceId: request.instanceId,
    instanceType: request.type,
    name: request.name,
    appId: request.appId,
    ownerId: scope.userId,
    orgId: scope.orgId,
    workspaceId: scope.workspaceId,
    data,
    linkedFlowIds: request.linkedFlowIds,
    createdBy: context.actorId,
    at: context.now.toISOString(),
  });
}

/** PUT: name, appId, linkedFlowIds and the whole data (required). With If-Match, a stale version is 412. */
export async function replaceAppInstance(ports: AppInstancePorts, context: CommandContext, scope: FlowScope, instanceId: string, request: InstanceInput, ifMatch?: number): Promise<Result> {
  const store = ports.eventStore;
  const { state } = await requireInstance(store, instanceId, scope);
  const data = validateInstanceData(state.type, request.data);
  await checkApp(store, request.appId, scope);
  await checkLinkedFlows(store, request.linkedFlowIds, scope);
  return run(store, context, instanceId, { type: 'ReplaceAppInstance', name: request.name, appId: request.appId, data, linkedFlowIds: request.linkedFlowIds, by: context.actorId, at: context.now.toISOString() }, ifMatch);
}

/** Deletes the instance (its stream stays as the audit trail) and then, best effort, its files' objects. */
export async function deleteAppInstance(ports: AppInstancePorts, context: CommandContext, scope: FlowScope, instanceId: string, ifMatch?: number): Promise<Result> {
  const { state } = await requireInstance(ports.eventStore, instanceId, scope);
  const result = await run(ports.eventStore, context, instanceId, { type: 'DeleteAppInstance', by: context.actorId, at: context.now.toISOString() }, ifMatch);
  await Promise.allSettled(state.files.map((f) => ports.objects.delete(f.key)));
  return result;
}

/** Attempts of a patch whose stream moved on meanwhile (each re-applies the patch to the newer data). */
export const PATCH_MAX_ATTEMPTS = 8;

/**
 * PATCH …/data. The patch is applied to the current data, the result checked against the type's
 * schema, and what changed is recorded as add/remove/replace operations (a diff).
 *
 * Concurrency: without If-Match, a patch that lost a race is applied again to the newer data (up
 * to PATCH_MAX_ATTEMPTS, then 409 CONCURRENCY_CONFLICT), so concurrent patches all land. With
 * If-Match naming an older version, the patch still lands when the changes made since that version
 * touched other places of the data than this patch does (paths compared as JSON Pointers, one
 * inside the other counting as the same place); when they touched the same place it is 412
 * PRECONDITION_FAILED, with the overlapping paths in `details.conflicts`.
 */
export async function patchAppInstanceData(
  ports: AppInstancePorts,
  context: CommandContext,
  scope: FlowScope,
  instanceId: string,
  patch: DataPatch,
  ifMatch?: number,
): Promise<Result> {
  const store = ports.eventStore;
  const streamId = appInstanceStreamId(instanceId);
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await requireInstance(store, instanceId, scope);
    if (ifMatch !== undefined && ifMatch > revision) throw new PreconditionFailedError(streamId, ifMatch, revision);
    const next = applyDataPatch(state.data, patch);
    const data = validateInstanceData(state.type, next);
    const ops = diffData(state.data, data);
    if (ops.length === 0) return { events: [], state, revision, position: null };
    if (ifMatch !== undefined && ifMatch < revision) {
      const since = await store.readStream(streamId, { fromRevision: ifMatch + 1 });
      const theirs = since.flatMap((e) => changedDataPaths(e as unknown as AppInstanceEvent));
      const conflicts = overlappingPaths(
        ops.map((o) => o.path),
        theirs,
      );
      if (conflicts.length > 0) {
        throw new DomainError('PRECONDITION_FAILED', `${streamId} is at version ${revision}, not ${ifMatch}, and the changes since touched the same data`, 'precondition_failed', {
          expected: ifMatch,
          actual: revision,
          conflicts,
        });
      }
    }
    try {
      return await run(store, context, instanceId, { type: 'PatchAppInstanceData', format: patch.format, ops, by: context.actorId, at: context.now.toISOString() }, revision);
    } catch (err) {
      if (!(err instanceof PreconditionFailedError)) throw err;
      if (attempt >= PATCH_MAX_ATTEMPTS) throw new ConflictError(streamId);
    }
  }
}

export async function addAppInstanceMessage(ports: AppInstancePorts, context: CommandContext, scope: FlowScope, instanceId: string, message: { role: MessageRole; content: string }): Promise<{ result: Result; messageId: string }> {
  await requireInstance(ports.eventStore, instanceId, scope);
  const messageId = `msg_${ports.newId()}`;
  const result = await run(ports.eventStore, context, instanceId, { type: 'AddAppInstanceMessage', messageId, role: message.role, content: message.content, by: context.actorId, at: context.now.toISOString() });
  return { result, messageId };
}

/** Paths of instance files: relative, `/`-separated, no `.`/`..` segments, no control characters or backslashes. */
export function normaliseFilePath(raw: string): string {
  const refuse = (message: string) => new DomainError('INVALID_FILE_PATH', `file path ${JSON.stringify(raw.slice(0, 100))} ${message}`, 'invalid', { fields: [{ field: 'body.path', message }] });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(raw)) throw refuse('must not hold control characters or backslashes');
  const segments = raw.split('/').filter((s) => s !== '');
  if (segments.length === 0) throw refuse('is empty');
  if (segments.some((s) => s === '.' || s === '..')) throw refuse('must not hold . or .. segments');
  const path = segments.join('/');
  if (path.length > APP_INSTANCE_LIMITS.filePathChars) throw refuse(`must be at most ${APP_INSTANCE_LIMITS.filePathChars} characters`);
  return path;
}

/**
 * Stores the bytes under a key of the service's choosing (`app-instances/<instanceId>/<fileId>`),
 * then records the file; a file with the same path is replaced (its old object removed afterwards).
 * If recording fails the new object is removed again.
 */
export async function uploadAppInstanceFile(
  ports: AppInstancePorts,
  context: CommandContext,
  scope: FlowScope,
  instanceId: string,
  upload: { path: string; contentType: string; bytes: Uint8Array },
): Promise<{ result: Result; file: InstanceFile }> {
  const path = normaliseFilePath(upload.path);
  const { state } = await requireInstance(ports.eventStore, instanceId, scope);
  if (upload.bytes.length > APP_INSTANCE_LIMITS.fileBytes) {
    throw new DomainError('FILE_TOO_LARGE', `a file is at most ${APP_INSTANCE_LIMITS.fileBytes} bytes`, 'too_large', { field: 'body.content', size: upload.bytes.length, limit: APP_INSTANCE_LIMITS.fileBytes });
  }
  if (!state.files.some((f) => f.path === path) && state.files.length >= APP_INSTANCE_LIMITS.files) {
    throw new DomainError('TOO_MANY_FILES', `an instance holds at most ${APP_INSTANCE_LIMITS.files} files`, 'conflict', { limit: APP_INSTANCE_LIMITS.files });
  }
  const key = `app-instances/${instanceId}/${ports.newId()}`;
  const stored = await ports.objects.put(key, upload.bytes, { contentType: upload.contentType, maxBytes: APP_INSTANCE_LIMITS.fileBytes });
  const file: InstanceFile = {
    path,
    key,
    size: stored.size,
    contentType: upload.contentType,
    sha256: stored.sha256 || createHash('sha256').update(upload.bytes).digest('hex'),
    uploadedBy: context.actorId,
    at: context.now.toISOString(),
  };
  let result: Result;
  try {
    result = await run(ports.eventStore, context, instanceId, { type: 'AddAppInstanceFile', file });
  } catch (err) {
    await ports.objects.delete(key).catch(() => undefined);
    throw err;
  }
  const previous = state.files.find((f) => f.path === path);
  if (previous && previous.key !== key) await ports.objects.delete(previous.key).catch(() => undefined);
  return { result, file };
}

export async function removeAppInstanceFile(ports: AppInstancePorts, context: CommandContext, scope: FlowScope, instanceId: string, rawPath: string): Promise<Result> {
  const path = normaliseFilePath(rawPath);
  const { state } = await requireInstance(ports.eventStore, instanceId, scope);
  const file = state.files.find((f) => f.path === path);
  if (!file) throw new DomainError('FILE_NOT_FOUND', `no file ${path} in this instance`, 'not_found', { field: 'query.path', path });
  const result = await run(ports.eventStore, context, instanceId, { type: 'RemoveAppInstanceFile', path, by: context.actorId, at: context.now.toISOString() });
  await ports.objects.delete(file.key).catch(() => undefined);
  return result;
}

/**
 * Fresh signed URLs for the instance's files (all, or those named): each valid for
 * `expiresInSeconds`; after that the URL answers 403 URL_EXPIRED and is re-signed here again.
 * Reading only: nothing is recorded.
 */
export async function resignAppInstanceFiles(
  ports: Pick<AppInstancePorts, 'eventStore' | 'objects'>,
  scope: FlowScope,
  instanceId: string,
  request: { paths?: string[]; expiresInSeconds: number },
): Promise<Array<{ path: string; url: string; expiresAt: string; size: number; contentType: string; sha256: string }>> {
  const { state } = await requireInstance(ports.eventStore, instanceId, scope);
  let files = state.files;
  if (request.paths) {
    files = request.paths.map((raw, i) => {
      const path = normaliseFilePath(raw);
      const file = state.files.find((f) => f.path === path);
      if (!file) throw new DomainError('FILE_NOT_FOUND', `no file ${path} in this instance`, 'not_found', { field: `body.paths.${i}`, path });
      return file;
    });
  }
  return Promise.all(
    files.map(async (f) => {
      const signed = await ports.objects.signedUrl(f.key, { expiresInSeconds: request.expiresInSeconds, downloadName: f.path.split('/').pop() });
      return { path: f.path, url: signed.url, expiresAt: signed.expiresAt, size: f.size, contentType: f.contentType, sha256: f.sha256 };
    }),
  );
}

export type { JsonObject };
