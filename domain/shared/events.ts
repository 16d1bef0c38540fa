import type { z } from 'zod';

/** Metadata carried by every stored event; it is what makes the log an audit trail. */
export interface EventMetadata {
  actorId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  correlationId: string;
  causationId: string | null;
  requestId: string | null;
  occurredAt: string;
}

/** An event as a decider produces it: no id, no position yet. */
export interface DomainEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** The events a map of data schemas describes: one `{ type, data }` member per event type. */
export type EventsOf<Schemas extends Record<string, z.ZodType>> = { [K in keyof Schemas & string]: { type: K; data: z.infer<Schemas[K]> } }[keyof Schemas & string];

/** An event as the store hands it back. Positions are plain numbers (see README, "positions"). */
export interface RecordedEvent<D = unknown> {
  id: string;
  type: string;
  streamId: string;
  /** 0-based revision of the event inside its stream. */
  revision: number;
  /** Position in the global ordered log; strictly increasing, not necessarily dense. */
  position: number;
  schemaVersion: number;
  data: D;
  metadata: EventMetadata;
}

export function categoryOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
}
