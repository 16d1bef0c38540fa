import { DomainError } from '../shared/decider.js';
import { TERMINAL_LIMITS, type AnswerStatus, type MirrorRole, type StepKind, type TerminalBeatEvent, type TerminalEvent } from './events.js';
import { hasSeq, nextDeliverable, type PromptState, type TerminalBeatState, type TerminalState } from './state.js';

/** Every command names the caller: a terminal and its prompts belong to one user, anyone else is told they do not exist. */
export type TerminalCommand =
  | { type: 'RegisterTerminal'; terminalId: string; userId: string; name: string; host: string; cwd: string | null; capabilities: string[]; leaseSeconds: number; at: string }
  | { type: 'Heartbeat'; userId: string; at: string }
  | { type: 'Disconnect'; userId: string; at: string }
  | { type: 'SetThinking'; userId: string; thinking: boolean; label: string | null; at: string }
  | { type: 'SendPrompt'; userId: string; promptId: string; content: string; at: string }
  /** A poll: hands out the next queued prompt, or one whose lease ran out unacknowledged (`at` is the decision's time). */
  | { type: 'DeliverNextPrompt'; userId: string; leaseSeconds: number; at: string }
  | { type: 'RecordSteps'; userId: string; promptId: string; steps: Array<{ seq: number; kind: StepKind; content: string }>; at: string }
  | { type: 'AnswerPrompt'; userId: string; promptId: string; content: string; status: AnswerStatus; at: string }
  | { type: 'CancelPrompt'; userId: string; promptId: string; at: string }
  | { type: 'MirrorEntries'; userId: string; entries: Array<{ seq: number; role: MirrorRole; content: string }>; at: string };

const terminalNotFound = () => new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');

function owned(state: TerminalState, userId: string): TerminalState {
  if (!state.exists || state.userId !== userId) throw terminalNotFound();
  return state;
}

function promptOf(state: TerminalState, promptId: string): PromptState {
  const prompt = state.prompts.get(promptId);
  if (!prompt) throw new DomainError('PROMPT_NOT_FOUND', 'prompt not found', 'not_found');
  return prompt;
}

function requireDelivered(prompt: PromptState) {
  if (prompt.deliveries === 0) {
    throw new DomainError('PROMPT_NOT_DELIVERED', 'this prompt was never handed out to the terminal (poll prompts/next first)', 'conflict', { promptId: prompt.promptId });
  }
}

export function decideTerminal(command: TerminalCommand, state: TerminalState): TerminalEvent[] {
  if (command.type === 'RegisterTerminal') {
    if (state.exists) throw new DomainError('TERMINAL_EXISTS', 'terminal already registered', 'conflict');
    const { type: _type, ...data } = command;
    return [{ type: 'TerminalRegistered', data }];
  }
  owned(state, command.userId);
  const at = command.at;
  switch (command.type) {
    case 'Heartbeat':
      return state.connected ? [] : [{ type: 'TerminalReconnected', data: { at } }];
    case 'Disconnect':
      return state.connected ? [{ type: 'TerminalDisconnected', data: { at } }] : [];
    case 'SetThinking':
      return [{ type: 'TerminalThinkingSet', data: { thinking: command.thinking, label: command.label, at } }];
    case 'SendPrompt':
      if (state.prompts.has(command.promptId)) throw new DomainError('PROMPT_EXISTS', 'prompt id already used', 'conflict');
      if (state.open.length >= TERMINAL_LIMITS.openPrompts) {
        throw new DomainError('TOO_MANY_OPEN_PROMPTS', `a terminal holds at most ${TERMINAL_LIMITS.openPrompts} prompts not yet answered or cancelled`, 'conflict', { limit: TERMINAL_LIMITS.openPrompts });
      }
      return [{ type: 'PromptSent', data: { promptId: command.promptId, content: command.content, sentBy: command.userId, at } }];
    case 'DeliverNextPrompt': {
      const next = nextDeliverable(state, at);
      if (!next) return [];
      const leaseExpiresAt = new Date(Date.parse(at) + command.leaseSeconds * 1000).toISOString();
      return [{ type: 'PromptDelivered', data: { promptId: next.promptId, delivery: next.deliveries + 1, leaseExpiresAt, at } }];
    }
    case 'RecordSteps': {
      const prompt = promptOf(state, command.promptId);
      requireDelivered(prompt);
      const fresh: typeof command.steps = [];
      for (const step of command.steps) {
        if (hasSeq(prompt.steps, step.seq) || fresh.some((s) => s.seq === step.seq)) continue;
        fresh.push(step);
      }
      if (fresh.length === 0) return [];
      if (prompt.answer) throw new DomainError('PROMPT_ALREADY_ANSWERED', 'the prompt was answered; no new steps are taken', 'conflict', { promptId: prompt.promptId });
      if (prompt.stepCount + fresh.length > TERMINAL_LIMITS.stepsPerPrompt) {
        throw new DomainError('TOO_MANY_STEPS', `a prompt holds at most ${TERMINAL_LIMITS.stepsPerPrompt} steps`, 'conflict', { limit: TERMINAL_LIMITS.stepsPerPrompt });
      }
      return fresh.map((s) => ({ type: 'PromptStepRecorded' as const, data: { promptId: prompt.promptId, seq: s.seq, kind: s.kind, content: s.content, at } }));
    }
    case 'AnswerPrompt': {
      const prompt = promptOf(state, command.promptId);
      requireDelivered(prompt);
      if (prompt.answer) {
        // A retry of the same answer (its response was lost) changes nothing; a different one is refused.
        if (prompt.answer.content === command.content && prompt.answer.status === command.status) return [];
        throw new DomainError('PROMPT_ALREADY_ANSWERED', 'the prompt already has a different answer', 'conflict', { promptId: prompt.promptId, status: prompt.answer.status });
      }
      // A cancelled prompt's answer is still recorded (the partial work is kept); the prompt stays cancelled.
      return [{ type: 'PromptAnswered', data: { promptId: prompt.promptId, content: command.content, status: command.status, at } }];
    }
    case 'CancelPrompt': {
      const prompt = promptOf(state, command.promptId);
      if (prompt.cancelledAt) return [];
      if (prompt.answer) throw new DomainError('PROMPT_ALREADY_ANSWERED', 'the prompt was already answered', 'conflict', { promptId: prompt.promptId, status: prompt.answer.status });
      return [{ type: 'PromptCancelled', data: { promptId: prompt.promptId, by: command.userId, at } }];
    }
    case 'MirrorEntries': {
      const events: TerminalEvent[] = [];
      const seen = new Set<number>();
      for (const entry of command.entries) {
        if (hasSeq(state.mirrored, entry.seq) || seen.has(entry.seq)) continue;
        seen.add(entry.seq);
        events.push({ type: 'ThreadEntryMirrored', data: { seq: entry.seq, role: entry.role, content: entry.content, at } });
      }
      return events;
    }
  }
}

export type TerminalBeatCommand = { type: 'RecordHeartbeat'; terminalId: string; at: string };

export function decideTerminalBeat(command: TerminalBeatCommand, _state: TerminalBeatState): TerminalBeatEvent[] {
  return [{ type: 'TerminalHeartbeatRecorded', data: { terminalId: command.terminalId, at: command.at } }];
}
