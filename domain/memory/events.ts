import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { MEMORY_TEXT_HARD_MAX, metadataValueSchema } from './limits.js';

const text = z.string().max(MEMORY_TEXT_HARD_MAX);
const metadata = z.record(z.string(), metadataValueSchema);
const nullableId = z.string().nullable();
/** Vectors are kept in the event so a rebuild never calls the provider again. */
export const embeddingSchema = z.object({ model: z.string(), vector: z.array(z.number()) });
export type MemoryEmbedding = z.infer<typeof embeddingSchema>;

/** Who did it: the acting user (null for system writes) and where from (`api`, `run:<processId>`). */
const author = { by: nullableId, source: z.string() };

export const memoryEventSchemas = {
  MemorySaved: z.object({
    memoryId: z.string(),
    text,
    metadata,
    subject: z.object({ userId: nullableId, agentId: nullableId, runId: nullableId }),
    ownerId: z.string(),
    orgId: nullableId,
    workspaceId: nullableId,
    embedding: embeddingSchema.nullable(),
    at: z.string(),
    ...author,
  }),
  /** `text`/`metadata` are the new values (equal to the previous ones when unchanged). */
  MemoryUpdated: z.object({
    memoryId: z.string(),
    previousText: text,
    text,
    previousMetadata: metadata,
    metadata,
    /** Present when the text changed: the new text's vector (null without a provider). */
    embedding: embeddingSchema.nullable().optional(),
    at: z.string(),
    ...author,
  }),
  MemoryDeleted: z.object({ memoryId: z.string(), previousText: text, previousMetadata: metadata, at: z.string(), ...author }),
};

export type MemoryEvent = EventsOf<typeof memoryEventSchemas>;
