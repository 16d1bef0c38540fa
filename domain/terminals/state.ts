import type { AnswerStatus, TerminalBeatEvent, TerminalEvent } from './events.js';

/**
 * Seqs seen so far, kept small: every seq up to `upTo` was seen, plus the few above it that came
 * out of order. A client numbering 0, 1, 2, … keeps `above` empty, so folding a long thread does
 * not copy a growing set on every event.
 */
export interface SeenSeqs {
  upTo: number;
  above: readonly number[];
}

export const noSeqs: SeenSeqs = { upTo: -1, above: [] };

export function hasSeq(seen: SeenSeqs, seq: number): boolean {
  return seq <= seen.upTo || seen.above.includes(seq);
}

export function addSeq(seen: SeenSeqs, seq: number): SeenSeqs {
  if (hasSeq(seen, seq)) return seen;
  if (seq !== seen.upTo + 1) return { upTo: seen.upTo, above: [...seen.above, seq].sort((a, b) => a - b) };
  let upTo = seq;
  const above = [...seen.above];
  while (above.length > 0 && above[0] === upTo + 1) upTo = above.shift()!;
  return { upTo, above };
}

export type PromptStatus = 'queued' | 'delivered' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface PromptState {
  promptId: string;
  /** Order of sending inside the terminal (0-based): the order prompts are handed out in. */
  index: number;
  content: string;
  sentAt: string;
  /** Hand-outs so far; 0 while queued. */
  deliveries: number;
  deliveredAt: string | null;
  leaseExpiresAt: string | null;
  /** The first step or the answer acknowledged the delivery: the prompt is never handed out again. */
  acknowledged: boolean;
  acknowledgedAt: string | null;
  steps: SeenSeqs;
  stepCount: number;
  answer: { content: string; status: AnswerStatus; at: string } | null;
  cancelledAt: string | null;
}

export interface TerminalState {
  exists: boolean;
  terminalId: string | null;
  userId: string | null;
  leaseSeconds: number;
  connected: boolean;
  prompts: ReadonlyMap<string, PromptState>;
  /** Prompts neither answered nor cancelled, in sending order. */
  open: readonly string[];
  mirrored: SeenSeqs;
}

export const initialTerminalState: TerminalState = {
  exists: false,
  terminalId: null,
  userId: null,
  leaseSeconds: 0,
  connected: false,
  prompts: new Map(),
  open: [],
  mirrored: noSeqs,
};

/** The status a prompt shows: an answer's status, else cancelled, else how far delivery got. */
export function promptStatusOf(p: PromptState): PromptStatus {
  if (p.cancelledAt) return 'cancelled';
  if (p.answer) return p.answer.status;
  if (p.acknowledged) return 'running';
  return p.deliveries > 0 ? 'delivered' : 'queued';
}

const isOpen = (p: PromptState) => p.answer === null && p.cancelledAt === null;

function withPrompt(state: TerminalState, prompt: PromptState): TerminalState {
  const prompts = new Map(state.prompts);
  prompts.set(prompt.promptId, prompt);
  const wasOpen = state.open.includes(prompt.promptId);
  const open = isOpen(prompt) ? (wasOpen ? state.open : [...state.open, prompt.promptId]) : state.open.filter((id) => id !== prompt.promptId);
  return { ...state, prompts, open };
}

export function evolveTerminal(state: TerminalState, event: TerminalEvent): TerminalState {
  switch (event.type) {
    case 'TerminalRegistered':
      return { ...state, exists: true, terminalId: event.data.terminalId, userId: event.data.userId, leaseSeconds: event.data.leaseSeconds, connected: true };
    case 'TerminalDisconnected':
      return { ...state, connected: false };
    case 'TerminalReconnected':
      return { ...state, connected: true };
    case 'TerminalThinkingSet':
      return state;
    case 'PromptSent':
      return withPrompt(state, {
        promptId: event.data.promptId,
        index: state.prompts.size,
        content: event.data.content,
        sentAt: event.data.at,
        deliveries: 0,
        deliveredAt: null,
        leaseExpiresAt: null,
        acknowledged: false,
        acknowledgedAt: null,
        steps: noSeqs,
        stepCount: 0,
        answer: null,
        cancelledAt: null,
      });
    case 'PromptDelivered': {
      const p = state.prompts.get(event.data.promptId);
      return p ? withPrompt(state, { ...p, deliveries: event.data.delivery, deliveredAt: event.data.at, leaseExpiresAt: event.data.leaseExpiresAt }) : state;
    }
    case 'PromptStepRecorded': {
      const p = state.prompts.get(event.data.promptId);
      return p ? withPrompt(state, { ...p, acknowledged: true, acknowledgedAt: p.acknowledgedAt ?? event.data.at, steps: addSeq(p.steps, event.data.seq), stepCount: p.stepCount + 1 }) : state;
    }
    case 'PromptAnswered': {
      const p = state.prompts.get(event.data.promptId);
      return p ? withPrompt(state, { ...p, acknowledged: true, acknowledgedAt: p.acknowledgedAt ?? event.data.at, answer: { content: event.data.content, status: event.data.status, at: event.data.at } }) : state;
    }
    case 'PromptCancelled': {
      const p = state.prompts.get(event.data.promptId);
      return p ? withPrompt(state, { ...p, cancelledAt: event.data.at }) : state;
    }
    case 'ThreadEntryMirrored':
      return { ...state, mirrored: addSeq(state.mirrored, event.data.seq) };
    default:
      return state;
  }
}

export interface TerminalBeatState {
  lastHeartbeatAt: string | null;
}

export const initialTerminalBeatState: TerminalBeatState = { lastHeartbeatAt: null };

export function evolveTerminalBeat(state: TerminalBeatState, event: TerminalBeatEvent): TerminalBeatState {
  return event.type === 'TerminalHeartbeatRecorded' ? { lastHeartbeatAt: event.data.at } : state;
}

/** Delivered at least once, cancelled, not answered yet: what the CLI must stop (it answers `cancelled` to acknowledge). */
export function cancelledInFlight(state: TerminalState): string[] {
  const ids: string[] = [];
  for (const p of state.prompts.values()) if (p.cancelledAt && !p.answer && p.deliveries > 0) ids.push(p.promptId);
  return ids;
}

/**
 * The next prompt a poll at `now` hands out: the oldest open prompt that is queued, or delivered
 * and not acknowledged within its lease.
 */
export function nextDeliverable(state: TerminalState, now: string): PromptState | null {
  for (const id of state.open) {
    const p = state.prompts.get(id)!;
    if (p.acknowledged) continue;
    if (p.deliveries === 0) return p;
    if (p.leaseExpiresAt !== null && p.leaseExpiresAt <= now) return p;
  }
  return null;
}

/** When the earliest lease of a delivered, unacknowledged prompt runs out (a waiting poll wakes then). */
export function nextLeaseExpiry(state: TerminalState): string | null {
  let earliest: string | null = null;
  for (const id of state.open) {
    const p = state.prompts.get(id)!;
    if (p.acknowledged || p.deliveries === 0 || p.leaseExpiresAt === null) continue;
    if (earliest === null || p.leaseExpiresAt < earliest) earliest = p.leaseExpiresAt;
  }
  return earliest;
}

export type TerminalStatus = 'ONLINE' | 'STALE' | 'OFFLINE';

/**
 * Derived at read time from the last heartbeat and the clock (no sweeper): ONLINE until two leases
 * passed without a beat, then STALE, OFFLINE after `offlineAfterSeconds` or once disconnected.
 */
export function terminalStatus(
  input: { connected: boolean; lastHeartbeatAt: string | null },
  now: Date,
  leaseSeconds: number,
  offlineAfterSeconds: number,
): TerminalStatus {
  if (!input.connected || !input.lastHeartbeatAt) return 'OFFLINE';
  const ageMs = now.getTime() - Date.parse(input.lastHeartbeatAt);
  if (ageMs > offlineAfterSeconds * 1000) return 'OFFLINE';
  if (ageMs > 2 * leaseSeconds * 1000) return 'STALE';
  return 'ONLINE';
}
