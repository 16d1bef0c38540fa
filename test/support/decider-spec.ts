import { expect } from 'chai';
import { DomainError, fold, type Decider, type ErrorKind } from '../../domain/shared/decider.js';
import type { DomainEvent } from '../../domain/shared/events.js';

/**
 * The decider specification: `spec.given(events).when(command).then(events)` or
 * `.thenThrows(code, kind?)`. Every produced event is checked against its own zod schema, as the
 * command handler does before appending, and `decide` must not mutate the folded state.
 */
export function deciderSpec<C, S, E extends DomainEvent>(decider: Decider<C, S, E>) {
  const stateOf = (events: readonly E[]): S => fold(decider.evolve, decider.initialState, events);

  function decideChecked(events: readonly E[], command: C): E[] {
    const state = stateOf(events);
    const before = JSON.stringify(state);
    const produced = decider.decide(command, state);
    expect(JSON.stringify(state), 'decide must not mutate the state it is given').to.equal(before);
    for (const e of produced) {
      const schema = decider.eventSchemas[e.type as E['type']];
      expect(schema, `${e.type} has a schema`).to.not.equal(undefined);
      const parsed = schema.safeParse(e.data);
      expect(parsed.success, `${e.type} matches its schema: ${parsed.success ? '' : parsed.error.message}`).to.equal(true);
    }
    return produced;
  }

  function rejectionOf(events: readonly E[], command: C): DomainError {
    try {
      decideChecked(events, command);
    } catch (err) {
      expect(err, 'the decider throws a DomainError').to.be.instanceOf(DomainError);
      return err as DomainError;
    }
    return expect.fail('expected the command to be rejected, but it was accepted') as never;
  }

  return {
    /** The state folded from these events (for assertions on state itself). */
    stateOf,
    given(events: readonly E[] = []) {
      return {
        when(command: C) {
          return {
            /** The events decided, for assertions beyond equality. */
            events: () => decideChecked(events, command),
            then(expected: readonly E[]) {
              const produced = decideChecked(events, command);
              expect(produced).to.deep.equal(expected);
              return produced;
            },
            /** The command is refused with this code (and kind, when given); returns the error for details. */
            thenThrows(code: string, kind?: ErrorKind): DomainError {
              const err = rejectionOf(events, command);
              expect(err.code, err.message).to.equal(code);
              if (kind !== undefined) expect(err.kind, `${code} is ${kind}`).to.equal(kind);
              return err;
            },
          };
        },
      };
    },
  };
}
