import { z } from 'zod';
import { removeAppInstanceFile, resignAppInstanceFiles, uploadAppInstanceFile } from '../../commands/app-instances.js';
import { APP_INSTANCE_LIMITS, appInstanceStreamId } from '../../domain/app-instances/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { defineRoute } from '../route.js';
import { etagOf, instanceParams, instancePorts, scopeOf } from './app-instances.js';

/**
 * Files of an app instance: kept in the object store (keys `app-instances/<instanceId>/<fileId>`,
 * recorded in the instance's events), downloaded through signed, expiring URLs. The upload is an
 * added operation (the catalog has only re-sign): without it an instance could never hold a file.
 */
const TAG = 'App tools';
const MAX_BASE64_CHARS = Math.ceil(APP_INSTANCE_LIMITS.fileBytes / 3) * 4;
const pathSchema = z.string().min(1).max(APP_INSTANCE_LIMITS.filePathChars);
const contentTypeSchema = z
  .string()
  .max(APP_INSTANCE_LIMITS.contentTypeChars)
  .regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[A-Za-z0-9!#$&^_.+-]+))*$/, 'must be a media type such as text/csv');
const uploadBody = z.strictObject({
  path: pathSchema,
  /** The bytes, base64 (standard alphabet, padding optional). */
  content: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
  contentType: contentTypeSchema.default('application/octet-stream'),
});
const expiresSchema = z.number().int().min(APP_INSTANCE_LIMITS.urlSecondsMin).max(APP_INSTANCE_LIMITS.urlSecondsMax);
const resignBody = z
  .strictObject({
    /** Absent: every file of the instance. */
    paths: z.array(pathSchema).min(1).max(APP_INSTANCE_LIMITS.files).optional(),
    expiresInSeconds: expiresSchema.default(APP_INSTANCE_LIMITS.urlSecondsDefault),
  })
  .default({ expiresInSeconds: APP_INSTANCE_LIMITS.urlSecondsDefault });
const removeQuery = z.strictObject({ path: pathSchema });

const signedFile = z.looseObject({ path: z.string(), url: z.string(), expiresAt: z.string(), size: z.number().int(), contentType: z.string(), sha256: z.string() });
const E = {
  400: { description: 'VALIDATION_FAILED or INVALID_FILE_PATH (names the field)' },
  401: { description: 'UNAUTHENTICATED' },
  403: { description: 'FORBIDDEN: the role lacks the permission' },
  404: { description: "APP_INSTANCE_NOT_FOUND (also another tenant's), FILE_NOT_FOUND (details.field)" },
};

export const appInstanceFileRoutes = [
  defineRoute({
    method: 'POST',
    path: '/app-instances/{instanceId}/files',
    operationId: 'uploadAppInstanceFile',
    summary: `upload a file to the instance (added operation): JSON {path, content (base64), contentType}, at most ${APP_INSTANCE_LIMITS.fileBytes} bytes and ${APP_INSTANCE_LIMITS.files} files; the same path replaces the file. Answers a signed URL`,
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    body: uploadBody,
    responses: {
      201: { description: '{success, file: {path, url, expiresAt, size, contentType, sha256}, version}', schema: z.looseObject({ success: z.literal(true), file: signedFile, version: z.number().int() }) },
      ...E,
      409: { description: `TOO_MANY_FILES (at most ${APP_INSTANCE_LIMITS.files})` },
      413: { description: 'FILE_TOO_LARGE, PAYLOAD_TOO_LARGE' },
    },
    async handler(input) {
      const { params, body } = input;
      if (body.content.length > MAX_BASE64_CHARS) {
        throw new DomainError('FILE_TOO_LARGE', `a file is at most ${APP_INSTANCE_LIMITS.fileBytes} bytes`, 'too_large', { field: 'body.content', limit: APP_INSTANCE_LIMITS.fileBytes });
      }
      const bytes = Buffer.from(body.content, 'base64');
      if (body.content.length % 4 === 1) throw new DomainError('VALIDATION_FAILED', 'content is not base64', 'invalid', { fields: [{ field: 'body.content', message: 'must be base64' }] });
      const ports = instancePorts(input);
      const scope = scopeOf(input);
      const { result, file } = await uploadAppInstanceFile(ports, input.command, scope, params.instanceId, { path: body.path, contentType: body.contentType, bytes: new Uint8Array(bytes) });
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      const signed = await ports.objects.signedUrl(file.key, { expiresInSeconds: APP_INSTANCE_LIMITS.urlSecondsDefault, downloadName: file.path.split('/').pop() });
      return {
        status: 201,
        body: { success: true, file: { path: file.path, url: signed.url, expiresAt: signed.expiresAt, size: file.size, contentType: file.contentType, sha256: file.sha256 }, version: result.revision },
        headers: etagOf(result.revision),
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/app-instances/{instanceId}/files',
    operationId: 'deleteAppInstanceFile',
    summary: 'remove one file of the instance (added operation), ?path=; its object is deleted',
    tag: TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    params: instanceParams,
    query: removeQuery,
    responses: { 200: { description: '{success, deleted: true, version}', schema: z.looseObject({ success: z.literal(true), deleted: z.literal(true), version: z.number().int() }) }, ...E },
    async handler(input) {
      const { params, query } = input;
      const result = await removeAppInstanceFile(instancePorts(input), input.command, scopeOf(input), params.instanceId, query.path);
      await input.settle(result.position, appInstanceStreamId(params.instanceId));
      return { status: 200, body: { success: true, deleted: true, version: result.revision }, headers: etagOf(result.revision) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/app-instances/{instanceId}/files/re-sign',
    operationId: 'resignAppInstanceFiles',
    summary: `fresh signed URLs for the instance's files (all, or the paths named), valid expiresInSeconds (default ${APP_INSTANCE_LIMITS.urlSecondsDefault}); an expired URL answers 403 URL_EXPIRED`,
    tag: TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: instanceParams,
    body: resignBody,
    responses: { 200: { description: '{success, files: [{path, url, expiresAt, size, contentType, sha256}]}', schema: z.looseObject({ success: z.literal(true), files: z.array(signedFile) }) }, ...E },
    async handler(input) {
      const { params, body } = input;
      const files = await resignAppInstanceFiles(instancePorts(input), scopeOf(input), params.instanceId, { paths: body.paths, expiresInSeconds: body.expiresInSeconds });
      return { status: 200, body: { success: true, files } };
    },
  }),
];
