import { z } from 'zod';

/**
 * Stream `collection-<collectionId>`: the collection's metadata (CollectionCreated,
 * CollectionDeleted) and, for writes made before documents got streams of their own, the
 * document events below (DocumentInserted/Updated/Deleted, still read, folded and projected).
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

/**
 * Stream `document-<collectionId>.<documentId>`: every write to one document since documents got
 * streams of their own, so writers of different documents of one collection never contend.
 * `revision` is the document's revision after the event (what ETag, If-Match and history show):
 * the stream revision, offset past the document's history in the collection stream when it has
 * one (`legacyRevision`, on the stream's first event, is that history's last revision), so a
 * document's revisions only grow. `previousSize` lets the projection keep the collection's byte
 * total by increments.
 */
const documentRef = { collectionId: z.string(), documentId: z.string() };
const revisionFields = { revision: z.number().int().min(0), legacyRevision: z.number().int().min(0).nullable(), at: z.string() };
export const documentStreamEventSchemas = {
  DocumentAdded: z.object({ ...documentRef, document, size: z.number().int().min(0), ...revisionFields }),
  DocumentChanged: z.object({
    ...documentRef,
    document,
    size: z.number().int().min(0),
    previousSize: z.number().int().min(0),
    update: z.string().nullable(),
    ...revisionFields,
  }),
  DocumentRemoved: z.object({
    ...documentRef,
    previousSize: z.number().int().min(0),
    /** The removed life began in the collection stream: its slot is the legacy count's, not a claim. */
    legacyLife: z.boolean(),
    ...revisionFields,
  }),
  /**
   * A slot claim for this life of the document (claimed after stream revision `revision - 1`,
   * document-wise) was never followed by its insert within the claim TTL (the inserter stopped
   * between claim and write): this event takes the revision the insert expected, so a late write
   * of that claim is refused, and the slot is given back (DocumentSlotsReconciled). Not a write:
   * the document stays as it was (not live), projections and history skip it.
   */
  DocumentInsertLapsed: z.object({ ...documentRef, ...revisionFields }),
};
type StreamData<K extends keyof typeof documentStreamEventSchemas> = z.infer<(typeof documentStreamEventSchemas)[K]>;
export type DocumentStreamEvent =
  | { type: 'DocumentAdded'; data: StreamData<'DocumentAdded'> }
  | { type: 'DocumentChanged'; data: StreamData<'DocumentChanged'> }
  | { type: 'DocumentRemoved'; data: StreamData<'DocumentRemoved'> }
  | { type: 'DocumentInsertLapsed'; data: StreamData<'DocumentInsertLapsed'> };

/** Collection ids are UUIDs (no "."), so the first "." separates them from the document id. */
export const documentStreamId = (collectionId: string, documentId: string) => `document-${collectionId}.${documentId}`;
export const DOCUMENT_CATEGORY = 'document';

/**
 * Stream `docslots-<collectionId>`: the collection's document count, kept with appends that never
 * conflict ("any" revision). Each insert claims a slot for its document id; the order of the
 * stream decides which claims fit under the limit, and every writer folds the same answer.
 * `after` is the document stream's revision the inserter saw (-1: none), which tells a claim for a
 * new life of the id from a repeated claim for the same life. `base` is the collection's live
 * document count from its collection stream (frozen: no document event is written there any more).
 * `at` (epoch ms, absent on claims made before claims could lapse) dates the claim for its TTL.
 * DocumentSlotsReconciled gives back the claims found lapsed (each fenced first by a
 * DocumentInsertLapsed on its document stream) and marks every claim of the slot stream up to
 * revision `through` as checked, so the next reconciliation starts after it.
 */
const claimRef = z.object({ documentId: z.string(), after: z.number().int().min(-1) });
export const slotEventSchemas = {
  DocumentSlotClaimed: z.object({
    documentId: z.string(), after: z.number().int().min(-1), base: z.number().int().min(0), max: z.number().int().min(1), at: z.number().int().min(0).optional(),
  }),
  DocumentSlotReleased: z.object({ documentId: z.string(), removedAt: z.number().int().min(0), legacyLife: z.boolean() }),
  DocumentSlotsReconciled: z.object({ through: z.number().int().min(-1), lapsed: z.array(claimRef) }),
};
export type SlotClaimRef = z.infer<typeof claimRef>;
export type SlotEvent =
  | { type: 'DocumentSlotClaimed'; data: z.infer<typeof slotEventSchemas.DocumentSlotClaimed> }
  | { type: 'DocumentSlotReleased'; data: z.infer<typeof slotEventSchemas.DocumentSlotReleased> }
  | { type: 'DocumentSlotsReconciled'; data: z.infer<typeof slotEventSchemas.DocumentSlotsReconciled> };
export const slotStreamId = (collectionId: string) => `docslots-${collectionId}`;
