import type { AppFileEncoding, AppTenant } from '../domain/apps/index.js';
import type { EventStore } from '../ports/event-store.js';
import { executeAppCommand, hashFiles } from './apps.js';
import type { CommandContext } from './handle.js';

export interface FileWrite {
  path: string;
  content: string;
  encoding?: AppFileEncoding;
}

/**
 * One change of an app's files (PUT /apps/{id}/files, the builder): every file written and every
 * path deleted in one `AppFilesChanged` event, or nothing when any rule refuses (the decider checks
 * them all before deciding). `expectedRevision` is the client's If-Match on the app's version.
 */
export function changeAppFiles(
  store: EventStore,
  context: CommandContext,
  appId: string,
  tenant: AppTenant,
  change: { files: FileWrite[]; delete: string[]; source: 'api' | 'builder' },
  expectedRevision?: number,
) {
  return executeAppCommand(store, context, { type: 'ChangeAppFiles', appId, tenant, by: context.actorId, put: hashFiles(change.files), delete: change.delete, source: change.source }, expectedRevision);
}
