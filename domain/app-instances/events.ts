import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of the app-instances context (README "Limits", docs/app-instances.md). */
export const APP_INSTANCE_LIMITS = {
  nameChars: 200,
  /** The instance's data as UTF-8 JSON, after any change. */
  dataBytes: 1_048_576,
  /**
   * Data carried by one event (a create or replace's whole data, a patch's recorded operations):
   * under Kafka's default 1 MiB message, which a larger event would exceed (README "Limits").
   */
  writeBytes: 786_432,
  /** Operations in one JSON Patch request. */
  patchOps: 1_000,
  files: 100,
  /** One file's bytes (the upload is base64 in a JSON body of at most 1 MiB). */
  fileBytes: 524_288,
  filePathChars: 300,
  contentTypeChars: 200,
  linkedFlows: 20,
  /** With `messageChars`, the conversation stays under ~6.4 MB (4-byte characters): the read model's document (data + conversation) stays well under MongoDB's 16 MiB. */
  messages: 200,
  messageChars: 8_000,
  /** Signed URLs of re-sign: default and bounds, seconds. */
  urlSecondsDefault: 900,
  urlSecondsMin: 1,
  urlSecondsMax: 7 * 24 * 3600,
} as const;

export const APP_INSTANCE_TYPE_IDS = ['kanban', 'job_tracker'] as const;
export type AppInstanceType = (typeof APP_INSTANCE_TYPE_IDS)[number];

export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** Any JSON value (what zod's `z.json()` accepts). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * A data change as recorded: RFC 6902 operations restricted to add, remove and replace (what a diff
 * of the data before and after produces), so the fold replays it exactly and cheaply.
 */
export const dataOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add'), path: z.string(), value: z.json() }),
  z.object({ op: z.literal('replace'), path: z.string(), value: z.json() }),
  z.object({ op: z.literal('remove'), path: z.string() }),
]);
export type DataOp = z.infer<typeof dataOpSchema>;

export const instanceFileSchema = z.object({
  path: z.string().min(1).max(APP_INSTANCE_LIMITS.filePathChars),
  /** Object-store key (`app-instances/<instanceId>/<fileId>`), chosen by the service. */
  key: z.string().min(1),
  size: z.number().int().min(0),
  contentType: z.string().min(1).max(APP_INSTANCE_LIMITS.contentTypeChars),
  sha256: z.string(),
  uploadedBy: z.string().nullable(),
  at: z.string(),
});
export type InstanceFile = z.infer<typeof instanceFileSchema>;

export const appInstanceEventSchemas = {
  AppInstanceCreated: z.object({
    instanceId: z.string(),
    type: z.enum(APP_INSTANCE_TYPE_IDS),
    name: z.string().min(1).max(APP_INSTANCE_LIMITS.nameChars),
    appId: z.string().nullable(),
    ownerId: z.string(),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    data: z.record(z.string(), z.json()),
    linkedFlowIds: z.array(z.string()).max(APP_INSTANCE_LIMITS.linkedFlows),
    createdBy: z.string().nullable(),
    at: z.string(),
  }),
  /** PUT: name, app, linked flows and the whole data at once (the type never changes). */
  AppInstanceReplaced: z.object({
    name: z.string().min(1).max(APP_INSTANCE_LIMITS.nameChars),
    appId: z.string().nullable(),
    data: z.record(z.string(), z.json()),
    linkedFlowIds: z.array(z.string()).max(APP_INSTANCE_LIMITS.linkedFlows),
    by: z.string().nullable(),
    at: z.string(),
  }),
  /** PATCH …/data: `format` is what the client sent; `ops` what changed (the diff, replayed by the fold). */
  AppInstanceDataPatched: z.object({
    format: z.enum(['merge-patch', 'json-patch']),
    ops: z.array(dataOpSchema).min(1),
    by: z.string().nullable(),
    at: z.string(),
  }),
  /** A file uploaded; one with the same path replaces the earlier one. */
  AppInstanceFileAdded: instanceFileSchema,
  AppInstanceFileRemoved: z.object({ path: z.string(), by: z.string().nullable(), at: z.string() }),
  AppInstanceMessageAdded: z.object({
    messageId: z.string(),
    role: z.enum(MESSAGE_ROLES),
    content: z.string().min(1).max(APP_INSTANCE_LIMITS.messageChars),
    by: z.string().nullable(),
    at: z.string(),
  }),
  AppInstanceDeleted: z.object({ by: z.string().nullable(), at: z.string() }),
};

export type AppInstanceEvent = EventsOf<typeof appInstanceEventSchemas>;

export const APP_INSTANCE_CATEGORY = 'appinstance';
export const appInstanceStreamId = (instanceId: string) => `${APP_INSTANCE_CATEGORY}-${instanceId}`;
