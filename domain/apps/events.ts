import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

export const appFileEncodingSchema = z.enum(['utf8', 'base64']);
export type AppFileEncoding = z.infer<typeof appFileEncodingSchema>;

/** A file as a manifest names it: enough to find its content and check it byte for byte. */
export const appFileRefSchema = z.object({
  path: z.string(),
  encoding: appFileEncodingSchema,
  /** sha256 (hex) of the decoded bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Decoded bytes. */
  size: z.number().int().nonnegative(),
});
export type AppFileRef = z.infer<typeof appFileRefSchema>;

/** A file with its content (`utf8` text, or `base64` of the bytes). */
export const appFileSchema = appFileRefSchema.extend({ content: z.string() });
export type AppFile = z.infer<typeof appFileSchema>;

/** JSON Schemas of what the app sends to its flow and what it gets back. */
export const appContractSchema = z.object({ input: z.record(z.string(), z.unknown()), output: z.record(z.string(), z.unknown()) });
export type AppContract = z.infer<typeof appContractSchema>;

const nullableId = z.string().nullable();
const author = { by: nullableId, at: z.string() };

export const appEventSchemas = {
  AppCreated: z.object({
    appId: z.string(), name: z.string(), description: z.string(), contract: appContractSchema,
    ownerId: z.string(), orgId: nullableId, workspaceId: nullableId, ...author,
  }),
  AppUpdated: z.object({ appId: z.string(), name: z.string(), description: z.string(), ...author }),
  AppDeleted: z.object({ appId: z.string(), ...author }),
  /**
   * One change of the files, all or nothing: `put` carries the new contents, `deleted` the removed
   * paths. `source` says who wrote it: `api` (PUT …/files) or `builder` (the builder chat).
   */
  AppFilesChanged: z.object({ appId: z.string(), put: z.array(appFileSchema), deleted: z.array(z.string()), source: z.enum(['api', 'builder']), ...author }),
  AppContractChanged: z.object({ appId: z.string(), contract: appContractSchema, ...author }),
  AppFlowLinked: z.object({ appId: z.string(), flowId: z.string(), previousFlowId: nullableId, ...author }),
  AppFlowUnlinked: z.object({ appId: z.string(), previousFlowId: z.string(), ...author }),
  /**
   * A snapshot: the head's files as a manifest (each file's content is an earlier `AppFilesChanged`
   * of this stream, found by sha256: a snapshot of a 10 MiB app fits in one event), the contract,
   * and the linked flow with its version (stream revision) at that moment.
   */
  AppVersionCreated: z.object({
    appId: z.string(), versionId: z.string(), number: z.number().int().positive(), label: z.string().nullable(),
    files: z.array(appFileRefSchema), contract: appContractSchema, flowId: nullableId, flowVersion: z.number().int().nullable(), ...author,
  }),
  /** The snapshot became the head again, as a new change: exactly its files (later ones gone), its contract and linked flow. */
  AppVersionRestored: z.object({
    appId: z.string(), versionId: z.string(), files: z.array(appFileRefSchema), contract: appContractSchema, flowId: nullableId, ...author,
  }),
};

export type AppEvent = EventsOf<typeof appEventSchemas>;
