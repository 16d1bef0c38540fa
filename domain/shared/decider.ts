import type { z } from 'zod';
import type { DomainEvent } from './events.js';

/**
 * A decider is the whole behaviour of one aggregate: pure functions only,
 * ids and time arrive inside the command.
 */
export interface Decider<Command, State, Event extends DomainEvent> {
  initialState: State;
  /** Must return a new state and never mutate its input: folded states are cached between commands. */
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /** The zod schema of each event type's data; the command handler checks every event before appending. */
  eventSchemas: Record<Event['type'], z.ZodType>;
  /**
   * True when the aggregate is done and rarely read again (a finished run): the command handler's
   * folded-state cache keeps only a few such states, so finished work does not crowd out live work.
   */
  settled?(state: State): boolean;
  /**
   * Set on aggregates whose streams grow long (flows, workflows): the command handler snapshots
   * their folded state every SNAPSHOT_EVERY events and folds from the newest snapshot
   * (commands/snapshots.ts). Bump it whenever the same events would fold into a different state
   * (a changed evolve rule, a new upcaster of its events), so that older snapshots are ignored; a
   * change of `initialState` (a new field) retires them without a bump. Absent: never snapshotted.
   */
  stateVersion?: number;
}

/** A context's decider from its four parts, so each `index.ts` names them in one line. */
export function decider<Command, State, Event extends DomainEvent>(
  initialState: State,
  evolve: Decider<Command, State, Event>['evolve'],
  decide: Decider<Command, State, Event>['decide'],
  eventSchemas: Decider<Command, State, Event>['eventSchemas'],
): Decider<Command, State, Event> {
  return { initialState, evolve, decide, eventSchemas };
}

/** One function per command type, each given its own command type. */
export type CommandHandlers<Command extends { type: string }, State, Event> = {
  [K in Command['type']]: (command: Extract<Command, { type: K }>, state: State) => Event[];
};

/** A decide function that hands each command to the handler of its type (instead of a switch that only dispatches). */
export function decideByType<Command extends { type: string }, State, Event>(handlers: CommandHandlers<Command, State, Event>) {
  return (command: Command, state: State): Event[] => (handlers[command.type as Command['type']] as (c: Command, s: State) => Event[])(command, state);
}

/**
 * What kind of refusal an error is, independent of any protocol: the API edge maps each kind to an
 * HTTP status in one place (api/errors.ts), so nothing below it knows about HTTP.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'precondition_failed'
  | 'too_large'
  | 'unprocessable'
  | 'rate_limited'
  | 'cancelled'
  | 'internal'
  | 'upstream'
  | 'unavailable'
  | 'timeout';

/** A rejection the caller can act on; `code` is stable and machine-readable, `details` says which field or value. */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly kind: ErrorKind = 'invalid',
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export function fold<State, Event>(evolve: (s: State, e: Event) => State, initial: State, events: Iterable<Event>): State {
  let state = initial;
  for (const e of events) state = evolve(state, e);
  return state;
}
