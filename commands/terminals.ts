import {
  cancelledInFlight,
  nextLeaseExpiry,
  terminalBeatDecider,
  terminalBeatStreamId,
  terminalDecider,
  terminalStreamId,
  type AnswerStatus,
  type MirrorRole,
  type PromptState,
  type StepKind,
  type TerminalCommand,
  type TerminalState,
} from '../domain/terminals/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { StreamSignals } from '../ports/stream-signals.js';
import { DomainError } from '../domain/shared/decider.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';
import { releaseTerminalSlot, takeTerminalSlot, type SlotPolicy } from './terminals-slots.js';

export type { SlotPolicy } from './terminals-slots.js';

/** What a long poll needs beyond the log: the wake-ups of this process and the clock it decides with. */
export interface TerminalPollPorts {
  eventStore: EventStore;
  streamSignals: StreamSignals;
  now(): Date;
}

export type RegisterInput = Omit<Extract<TerminalCommand, { type: 'RegisterTerminal' }>, 'type' | 'at'>;

/**
 * Takes one of the user's terminal slots (409 TOO_MANY_TERMINALS at the limit), then records the
 * terminal. A slot whose terminal was never recorded (a crash in between) counts until it is found
 * offline, REMOTE_TERMINAL_OFFLINE_AFTER later.
 */
export async function registerTerminal(store: EventStore, context: CommandContext, input: RegisterInput, policy: SlotPolicy) {
  await takeTerminalSlot(store, context, input.userId, input.terminalId, policy);
  return handleAtContextTime(store, context, terminalStreamId(input.terminalId), terminalDecider, { type: 'RegisterTerminal', ...input });
}

/**
 * Keeps the lease: reconnects a disconnected terminal (an event in its stream), then records the beat
 * in `terminalbeat-<id>`. Answers the terminal's state (for the cancellations the CLI must see)
 * and the beat's position (read-your-writes on the terminal list).
 */
export async function heartbeat(store: EventStore, context: CommandContext, userId: string, terminalId: string, policy: SlotPolicy) {
  // Reconnecting makes the terminal live again: it needs a slot first, and at the limit nothing is written (409).
  const before = (await loadTerminal(store, terminalId)).state;
  const slotFirst = before.exists && before.userId === userId && !before.connected;
  if (slotFirst) await takeTerminalSlot(store, context, userId, terminalId, policy);
  const terminal = await handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'Heartbeat', userId });
  if (!slotFirst && terminal.events.some((e) => e.type === 'TerminalReconnected')) {
    // Disconnected by another process since the state above was read: take the slot now, or go back offline.
    try {
      await takeTerminalSlot(store, context, userId, terminalId, policy);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'TOO_MANY_TERMINALS') await handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'Disconnect', userId });
      throw err;
    }
  }
  const beat = await handleAtContextTime(store, context, terminalBeatStreamId(terminalId), terminalBeatDecider, { type: 'RecordHeartbeat', terminalId });
  return { state: terminal.state, terminalPosition: terminal.position, position: beat.position };
}

/** Disconnects (ownership checked there), then frees the terminal's slot; both are no-ops when repeated. */
export async function disconnectTerminal(store: EventStore, context: CommandContext, userId: string, terminalId: string) {
  const result = await handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'Disconnect', userId });
  await releaseTerminalSlot(store, context, userId, terminalId);
  return result;
}

export function setThinking(store: EventStore, context: CommandContext, userId: string, terminalId: string, thinking: boolean, label: string | null) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'SetThinking', userId, thinking, label });
}

export function sendPrompt(store: EventStore, context: CommandContext, userId: string, terminalId: string, promptId: string, content: string) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'SendPrompt', userId, promptId, content });
}

export function recordSteps(
  store: EventStore,
  context: CommandContext,
  userId: string,
  terminalId: string,
  promptId: string,
  steps: Array<{ seq: number; kind: StepKind; content: string }>,
) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'RecordSteps', userId, promptId, steps });
}

export function answerPrompt(store: EventStore, context: CommandContext, userId: string, terminalId: string, promptId: string, content: string, status: AnswerStatus) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'AnswerPrompt', userId, promptId, content, status });
}

export function cancelPrompt(store: EventStore, context: CommandContext, userId: string, terminalId: string, promptId: string) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'CancelPrompt', userId, promptId });
}

export function mirrorEntries(store: EventStore, context: CommandContext, userId: string, terminalId: string, entries: Array<{ seq: number; role: MirrorRole; content: string }>) {
  return handleAtContextTime(store, context, terminalStreamId(terminalId), terminalDecider, { type: 'MirrorEntries', userId, entries });
}

/** The terminal's folded state (ownership is checked by the caller against `userId`). */
export function loadTerminal(store: EventStore, terminalId: string) {
  return loadState<TerminalState>(store, terminalStreamId(terminalId), terminalDecider);
}

export interface PollAnswer {
  prompt: PromptState | null;
  /** Delivered prompts cancelled by the web and not answered yet: the CLI stops them and answers `cancelled`. */
  cancelledPromptIds: string[];
  position: number | null;
}

/**
 * The long poll: decides a delivery at once and, when nothing is deliverable, waits for an append
 * to the terminal's stream (a prompt sent, a cancel), for the earliest unacknowledged lease to run
 * out, or for `waitMs`, then decides again. Every delivery is decided on the folded stream at the
 * clock's time (`DeliverNextPrompt`), so two polls never hand out one prompt within its lease. The
 * wait ends early on a new cancellation and when `signal` aborts (the client went away).
 */
export async function pollNextPrompt(
  ports: TerminalPollPorts,
  context: CommandContext,
  userId: string,
  terminalId: string,
  options: { waitMs: number; leaseSeconds: number; signal?: AbortSignal },
): Promise<PollAnswer> {
  const streamId = terminalStreamId(terminalId);
  const deadline = Date.now() + options.waitMs;
  const watch = options.waitMs > 0 ? ports.streamSignals.watch(streamId) : null;
  try {
    let known: Set<string> | null = null;
    for (;;) {
      const result = await handleAtContextTime(ports.eventStore, { ...context, now: ports.now() }, streamId, terminalDecider, { type: 'DeliverNextPrompt', userId, leaseSeconds: options.leaseSeconds });
      const cancelled = cancelledInFlight(result.state);
      const delivered = result.events.find((e) => e.type === 'PromptDelivered');
      if (delivered) return { prompt: result.state.prompts.get(delivered.data.promptId)!, cancelledPromptIds: cancelled, position: result.position };
      if (known && cancelled.some((id) => !known!.has(id))) return { prompt: null, cancelledPromptIds: cancelled, position: null };
      known ??= new Set(cancelled);
      const left = deadline - Date.now();
      if (!watch || left <= 0 || options.signal?.aborted) return { prompt: null, cancelledPromptIds: cancelled, position: null };
      const expiry = nextLeaseExpiry(result.state);
      const untilExpiry = expiry === null ? left : Math.max(1, Date.parse(expiry) - ports.now().getTime() + 1);
      await watch.next(Math.min(left, untilExpiry), options.signal);
    }
  } finally {
    watch?.close();
  }
}
