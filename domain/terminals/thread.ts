import type { TerminalEvent } from './events.js';

/**
 * One entry of a terminal's thread. `seq` is the revision of the event in `terminal-<id>`: the
 * thread's order, its pagination cursor and the SSE event id (`Last-Event-ID` resumes after it).
 */
export interface ThreadEntry {
  seq: number;
  at: string;
  type: 'prompt' | 'delivered' | 'step' | 'answer' | 'cancelled' | 'mirror';
  promptId: string | null;
  /** `user` for prompts and mirrored user text, `assistant` for answers, steps and mirrored answers. */
  role: 'user' | 'assistant' | null;
  /** A step's kind. */
  kind: 'thinking' | 'tool' | 'output' | 'status' | null;
  /** The CLI's own seq of a step or mirrored entry. */
  clientSeq: number | null;
  content: string | null;
  /** An answer's status. */
  status: 'completed' | 'failed' | 'cancelled' | null;
  /** A delivery's number (2 and up are redeliveries). */
  delivery: number | null;
}

/** Events of the terminal itself (not thread entries), streamed over SSE as `event: terminal`. */
export interface TerminalNotice {
  seq: number;
  at: string;
  type: 'registered' | 'disconnected' | 'reconnected' | 'thinking';
  thinking: boolean | null;
  label: string | null;
}

const base = { promptId: null, role: null, kind: null, clientSeq: null, content: null, status: null, delivery: null } as const;

export function threadEntryOf(event: TerminalEvent, seq: number): ThreadEntry | null {
  const at = event.data.at;
  switch (event.type) {
    case 'PromptSent':
      return { ...base, seq, at, type: 'prompt', promptId: event.data.promptId, role: 'user', content: event.data.content };
    case 'PromptDelivered':
      return { ...base, seq, at, type: 'delivered', promptId: event.data.promptId, delivery: event.data.delivery };
    case 'PromptStepRecorded':
      return { ...base, seq, at, type: 'step', promptId: event.data.promptId, role: 'assistant', kind: event.data.kind, clientSeq: event.data.seq, content: event.data.content };
    case 'PromptAnswered':
      return { ...base, seq, at, type: 'answer', promptId: event.data.promptId, role: 'assistant', content: event.data.content, status: event.data.status };
    case 'PromptCancelled':
      return { ...base, seq, at, type: 'cancelled', promptId: event.data.promptId };
    case 'ThreadEntryMirrored':
      return { ...base, seq, at, type: 'mirror', role: event.data.role, clientSeq: event.data.seq, content: event.data.content };
    default:
      return null;
  }
}

export function terminalNoticeOf(event: TerminalEvent, seq: number): TerminalNotice | null {
  const at = event.data.at;
  switch (event.type) {
    case 'TerminalRegistered':
      return { seq, at, type: 'registered', thinking: null, label: null };
    case 'TerminalDisconnected':
      return { seq, at, type: 'disconnected', thinking: null, label: null };
    case 'TerminalReconnected':
      return { seq, at, type: 'reconnected', thinking: null, label: null };
    case 'TerminalThinkingSet':
      return { seq, at, type: 'thinking', thinking: event.data.thinking, label: event.data.label };
    default:
      return null;
  }
}
