import { DomainError } from '../shared/decider.js';
import { storedText, type DeadLetterEvent, type FailedEvent, type UndecodableMessage } from './events-dead-letters.js';
import type { DeadLetterState } from './state-dead-letters.js';

export type DeadLetterCommand =
  | { type: 'RecordDeadLetter'; deadLetterId: string; consumer: string; event: FailedEvent; error: string; attempts: number; firstFailedAt: string; lastFailedAt: string }
  | { type: 'RecordUndecodableMessage'; deadLetterId: string; consumer: string; message: UndecodableMessage; error: string; at: string }
  /** `consumerRunning`: whether a live worker announced the letter's consumer (read by the caller, see projections/workers.ts). */
  | { type: 'RequestRetry'; deadLetterId: string; requestId: string; consumerRunning: boolean; at: string }
  | { type: 'RecordRetrySuccess'; deadLetterId: string; requestId: string; by: string; at: string }
  | { type: 'RecordRetryFailure'; deadLetterId: string; requestId: string; by: string; error: string; at: string }
  | { type: 'DiscardDeadLetter'; deadLetterId: string; reason: string | null; at: string };

export function decide(command: DeadLetterCommand, state: DeadLetterState): DeadLetterEvent[] {
  switch (command.type) {
    case 'RecordDeadLetter': {
      // Every round of failed delivery is a fact of its own (a redelivery after a crash fails again).
      const { type: _type, ...data } = command;
      return [{ type: 'EventDeadLettered', data: { ...data, error: storedText(data.error) } }];
    }
    case 'RecordUndecodableMessage': {
      // The same message again (redelivered before its offset was committed) is the same letter: recorded once.
      if (state.exists && state.status === 'open') return [];
      const { deadLetterId, consumer, message, error, at } = command;
      const key = message.key === null ? null : storedText(message.key).slice(0, 1024);
      return [{ type: 'UndecodableMessageDeadLettered', data: { deadLetterId, consumer, message: { ...message, key }, error: storedText(error), at } }];
    }
    case 'RequestRetry':
      mustBeOpen(state);
      if (state.kind === 'undecodable') {
        throw new DomainError('DEAD_LETTER_NOT_RETRIABLE', 'this letter is a message that could not be decoded: there is no event to deliver again; discard it instead', 'conflict');
      }
      if (!command.consumerRunning) {
        throw new DomainError('CONSUMER_NOT_RUNNING', `no live worker runs consumer ${state.consumer}: the retry would wait for one; start a worker that runs it, or discard the letter`, 'conflict');
      }
      return [{ type: 'DeadLetterRetryRequested', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, requestedAt: command.at } }];
    case 'RecordRetrySuccess':
      // A request answered already (a redelivered request, a second worker) is not answered twice.
      if (!state.pending.includes(command.requestId)) return [];
      return [{ type: 'DeadLetterResolved', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, by: command.by, at: command.at } }];
    case 'RecordRetryFailure':
      if (!state.pending.includes(command.requestId)) return [];
      return [{ type: 'DeadLetterRetryFailed', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, by: command.by, error: storedText(command.error), at: command.at } }];
    case 'DiscardDeadLetter':
      if (!state.exists) throw notFound();
      // Discarding twice is the same outcome: no second event, no error.
      if (state.status === 'discarded') return [];
      if (state.status === 'resolved') throw resolved();
      return [{ type: 'DeadLetterDiscarded', data: { deadLetterId: command.deadLetterId, reason: command.reason === null ? null : storedText(command.reason), at: command.at } }];
  }
}

function mustBeOpen(state: DeadLetterState) {
  if (!state.exists) throw notFound();
  if (state.status === 'resolved') throw resolved();
  if (state.status === 'discarded') throw new DomainError('DEAD_LETTER_DISCARDED', 'this dead letter was discarded', 'conflict');
}

const notFound = () => new DomainError('DEAD_LETTER_NOT_FOUND', 'no such dead letter', 'not_found');
const resolved = () => new DomainError('DEAD_LETTER_RESOLVED', 'this dead letter was already delivered successfully', 'conflict');
