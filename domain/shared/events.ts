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
  /** W3C trace context of the span that wrote the event; present only while tracing is on (README, "Tracing"). */
  traceparent?: string;
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

/**
 * Events whose data their decider already checked against the event's schema when it built them
 * (e.g. to report bad command input as VALIDATION_FAILED), with the schema used, so the command
 * handler's check before the append does not run zod a second time with that same schema. Keyed by
 * the event object: an event rebuilt or replaced is checked again. Sound because deciders never
 * change an event after building it and the handler decides, checks and hands events to the store
 * in one synchronous stretch.
 */
const checkedEvents = new WeakMap<object, z.ZodType>();

/** Marks `event` as checked against `schema` (call only right after a successful check). */
export function markChecked<E extends DomainEvent>(event: E, schema: z.ZodType): E {
  checkedEvents.set(event, schema);
  return event;
}

/** Whether `event` was checked against exactly `schema` when it was built. */
export const wasChecked = (event: DomainEvent, schema: z.ZodType): boolean => checkedEvents.get(event) === schema;
