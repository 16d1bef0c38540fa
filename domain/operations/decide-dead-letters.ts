import { DomainError } from '../shared/decider.js';
import type { DeadLetterEvent, FailedEvent } from './events-dead-letters.js';
import type { DeadLetterState } from './state-dead-letters.js';

export type DeadLetterCommand =
  | { type: 'RecordDeadLetter'; deadLetterId: string; consumer: string; event: FailedEvent; error: string; attempts: number; firstFailedAt: string; lastFailedAt: string }
  | { type: 'RequestRetry'; deadLetterId: string; requestId: string; at: string }
  | { type: 'RecordRetrySuccess'; deadLetterId: string; requestId: string; by: string; at: string }
  | { type: 'RecordRetryFailure'; deadLetterId: string; requestId: string; by: string; error: string; at: string };

export function decide(command: DeadLetterCommand, state: DeadLetterState): DeadLetterEvent[] {
  switch (command.type) {
    case 'RecordDeadLetter': {
      // Every round of failed delivery is a fact of its own (a redelivery after a crash fails again).
      const { type: _type, ...data } = command;
      return [{ type: 'EventDeadLettered', data }];
    }
    case 'RequestRetry':
      if (!state.exists) throw new DomainError('DEAD_LETTER_NOT_FOUND', 'no such dead letter', 'not_found');
      if (state.status === 'resolved') throw new DomainError('DEAD_LETTER_RESOLVED', 'this dead letter was already delivered successfully', 'conflict');
      return [{ type: 'DeadLetterRetryRequested', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, requestedAt: command.at } }];
    case 'RecordRetrySuccess':
      // A request answered already (a redelivered request, a second worker) is not answered twice.
      if (!state.pending.includes(command.requestId)) return [];
      return [{ type: 'DeadLetterResolved', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, by: command.by, at: command.at } }];
    case 'RecordRetryFailure':
      if (!state.pending.includes(command.requestId)) return [];
      return [{ type: 'DeadLetterRetryFailed', data: { deadLetterId: command.deadLetterId, requestId: command.requestId, by: command.by, error: command.error, at: command.at } }];
  }
}
