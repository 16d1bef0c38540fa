import { z } from 'zod';

/**
 * Stream `collection-<collectionId>`: the collection's metadata and every write to its documents.
 * Document events carry the whole resulting document (so any version can be read back from the
 * log alone) and `previousRevision`, the revision of the event that last wrote the same document,
 * which chains a document's history through the stream without scanning it. `count` and `bytes`
 * are the collection's totals after the event: absolute values keep the projector idempotent.
 */
const scopeFields = {
  ownerId: z.string(),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
};
const indexSpec = z.object({ keys: z.record(z.string(), z.union([z.literal(1), z.literal(-1)])) });
const totals = { count: z.number().int().min(0), bytes: z.number().int().min(0), at: z.string() };
const document = z.record(z.string(), z.unknown());

export const documentEventSchemas = {
  CollectionCreated: z.object({
    collectionId: z.string(),
    name: z.string(),
    ...scopeFields,
    /** JSON Schema as JSON text (its `$`-keys could not be stored in FerretDB), or null. */
    schema: z.string().nullable(),
    indexes: z.array(indexSpec),
    createdAt: z.string(),
  }),
  DocumentInserted: z.object({
    documentId: z.string(),
    document,
    size: z.number().int().min(0),
    /** Set when the id was used before and deleted: the history chain goes on through the old life. */
    previousRevision: z.number().int().min(0).nullable(),
    ...totals,
  }),
  DocumentUpdated: z.object({
    documentId: z.string(),
    document,
    size: z.number().int().min(0),
    /** The update operators as JSON text when the change was given as operators; null for a replacement. */
    update: z.string().nullable(),
    previousRevision: z.number().int().min(0),
    ...totals,
  }),
  DocumentDeleted: z.object({ documentId: z.string(), previousRevision: z.number().int().min(0), ...totals }),
  CollectionDeleted: z.object({ name: z.string(), documents: z.number().int().min(0), at: z.string() }),
};

type Data<K extends keyof typeof documentEventSchemas> = z.infer<(typeof documentEventSchemas)[K]>;
export type IndexSpecData = z.infer<typeof indexSpec>;

export type DocumentEvent =
  | { type: 'CollectionCreated'; data: Data<'CollectionCreated'> }
  | { type: 'DocumentInserted'; data: Data<'DocumentInserted'> }
  | { type: 'DocumentUpdated'; data: Data<'DocumentUpdated'> }
  | { type: 'DocumentDeleted'; data: Data<'DocumentDeleted'> }
  | { type: 'CollectionDeleted'; data: Data<'CollectionDeleted'> };

export const collectionStreamId = (collectionId: string) => `collection-${collectionId}`;
export const COLLECTION_CATEGORY = 'collection';
