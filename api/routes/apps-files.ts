import { z } from 'zod';
import { loadVisibleApp } from '../../commands/apps.js';
import { changeAppFiles } from '../../commands/apps-files.js';
import { DomainError } from '../../domain/shared/decider.js';
import { MAX_APP_FILES, normaliseAppPath, type AppFile } from '../../domain/apps/index.js';
import { defineRoute, type RouteDef } from '../route.js';
import { appErrors, appEtag, appIfMatch, appParams, appsTag, settleApp, tenantOf } from './apps.js';

/**
 * An app's files: the whole tree with contents, one file by `?path=`, and one change of many files
 * (`PUT`) applied as one event or not at all. Paths are checked by the pure domain
 * (domain/apps/limits.ts), each refusal with a stable code and `details.path`.
 */

const fileOut = z.object({
  path: z.string(),
  encoding: z.enum(['utf8', 'base64']),
  sha256: z.string().describe('hex sha256 of the decoded bytes'),
  size: z.number().int().describe('decoded bytes'),
  content: z.string().describe('text (utf8) or base64 of the bytes'),
});

interface TreeNode {
  name: string;
  path: string;
  type: 'directory' | 'file';
  size?: number;
  children?: TreeNode[];
}
const treeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({ name: z.string(), path: z.string(), type: z.enum(['directory', 'file']), size: z.number().int().optional(), children: z.array(treeNode).optional() }),
);

/** Directories first, then files, each by name: the shape a file explorer shows. */
export function treeOf(files: AppFile[]): TreeNode[] {
  const root: TreeNode = { name: '', path: '', type: 'directory', children: [] };
  for (const file of files) {
    const parts = file.path.split('/');
    let dir = root;
    parts.slice(0, -1).forEach((part, i) => {
      const path = parts.slice(0, i + 1).join('/');
      let next = dir.children!.find((c) => c.type === 'directory' && c.name === part);
      if (!next) dir.children!.push((next = { name: part, path, type: 'directory', children: [] }));
      dir = next;
    });
    dir.children!.push({ name: parts[parts.length - 1], path: file.path, type: 'file', size: file.size });
  }
  const sort = (nodes: TreeNode[]): TreeNode[] =>
    nodes
      .sort((a, b) => (a.type === b.type ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.type === 'directory' ? -1 : 1))
      .map((n) => (n.children ? { ...n, children: sort(n.children) } : n));
  return sort(root.children!);
}

const changeBody = z.strictObject({
  files: z
    .array(z.strictObject({
      path: z.string().max(1024).describe('relative, normalised by the service; refused with a stable code when absolute, climbing (..), hostile or of a type not allowed'),
      content: z.string(),
      encoding: z.enum(['utf8', 'base64']).optional().describe('utf8 (default) or base64; images must be base64'),
    }))
    .max(MAX_APP_FILES)
    .default([]),
  delete: z.array(z.string().max(1024)).max(MAX_APP_FILES).optional(),
});

const pathRefusals =
  'refusals name the path in details.path: APP_PATH_EMPTY, APP_PATH_ABSOLUTE, APP_PATH_TRAVERSAL, APP_PATH_HOSTILE, APP_PATH_INVALID, APP_PATH_TOO_LONG, APP_PATH_TOO_DEEP, APP_FILE_TYPE_NOT_ALLOWED, APP_PATH_DUPLICATE, APP_FILE_ENCODING, APP_FILE_BASE64_INVALID, APP_FILE_CONTENT_INVALID';

export const appFileRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/apps/{appId}/files',
    operationId: 'getAppFiles',
    summary: 'the app\'s files with their contents and as a tree (ETag: the app\'s version); ?path= for one file',
    tag: appsTag,
    auth: 'bearer',
    permission: 'view_resources',
    params: appParams,
    query: z.strictObject({ path: z.string().max(1024).optional().describe('one file, by its path') }),
    responses: {
      200: {
        description: 'every file (sorted by path) and the tree; or, with ?path=, that file',
        schema: z.union([
          z.object({ success: z.literal(true), version: z.number().int(), totalBytes: z.number().int(), files: z.array(fileOut), tree: z.array(treeNode) }),
          z.object({ success: z.literal(true), version: z.number().int(), file: fileOut }),
        ]),
      },
      400: { description: `VALIDATION_FAILED, or a path refusal (${pathRefusals})` },
      404: { description: 'APP_NOT_FOUND, or APP_FILE_NOT_FOUND for ?path= (details.path)' },
    },
    async handler(input) {
      const state = await loadVisibleApp(input.services.eventStore, input.params.appId, tenantOf(input));
      const headers = appEtag(state.version);
      if (input.query.path !== undefined) {
        const path = normaliseAppPath(input.query.path);
        const file = state.files[path];
        if (!file) throw new DomainError('APP_FILE_NOT_FOUND', `the app has no file ${JSON.stringify(path)}`, 'not_found', { path: input.query.path });
        return { status: 200, body: { success: true, version: state.version, file }, headers };
      }
      const files = Object.values(state.files);
      return { status: 200, body: { success: true, version: state.version, totalBytes: state.totalBytes, files, tree: treeOf(files) }, headers };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/apps/{appId}/files',
    operationId: 'putAppFiles',
    summary: 'write and delete files as ONE change, all or nothing (If-Match: the app\'s version)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: changeBody,
    responses: {
      200: {
        description: 'applied (or nothing to change): the paths written and deleted, the app\'s new version (ETag)',
        schema: z.object({ success: z.literal(true), changed: z.boolean(), version: z.number().int(), written: z.array(z.string()), deleted: z.array(z.string()), fileCount: z.number().int(), totalBytes: z.number().int() }),
      },
      400: { description: `VALIDATION_FAILED, or a path refusal (${pathRefusals}); nothing is written` },
      404: { description: 'APP_NOT_FOUND, or APP_FILE_NOT_FOUND: a path to delete does not exist (details.path); nothing is written' },
      409: appErrors[409],
      412: appErrors[412],
      413: { description: 'APP_FILE_TOO_LARGE, APP_WRITE_TOO_LARGE, APP_TOO_MANY_FILES, APP_TOO_LARGE (details.path), or a body over the request limit; nothing is written' },
    },
    async handler(input) {
      const { params, body, services } = input;
      const result = await changeAppFiles(services.eventStore, input.command, params.appId, tenantOf(input), { files: body.files, delete: body.delete ?? [], source: 'api' }, appIfMatch(input));
      await settleApp(input, params.appId, result);
      const event = result.events[0];
      const written = event?.type === 'AppFilesChanged' ? event.data.put.map((f) => f.path) : [];
      const deleted = event?.type === 'AppFilesChanged' ? event.data.deleted : [];
      const state = result.state;
      return {
        status: 200,
        body: { success: true, changed: result.events.length > 0, version: state.version, written, deleted, fileCount: Object.keys(state.files).length, totalBytes: state.totalBytes },
        headers: appEtag(state.version),
      };
    },
  }),
];
