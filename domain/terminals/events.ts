import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of the remote-terminal context (README "Limits"). */
export const TERMINAL_LIMITS = {
  nameChars: 100,
  hostChars: 255,
  cwdChars: 4_096,
  capabilities: 32,
  capabilityChars: 64,
  promptChars: 100_000,
  /** Answers, steps and mirrored entries. */
  contentChars: 200_000,
  labelChars: 200,
  stepsPerCall: 100,
  entriesPerCall: 100,
  stepsPerPrompt: 10_000,
  /** Prompts not yet answered or cancelled, per terminal. */
  openPrompts: 100,
  maxSeq: 1_000_000_000,
} as const;

export const terminalNameSchema = z.string().trim().min(1).max(TERMINAL_LIMITS.nameChars);
export const terminalHostSchema = z.string().trim().min(1).max(TERMINAL_LIMITS.hostChars);
export const terminalCwdSchema = z.string().min(1).max(TERMINAL_LIMITS.cwdChars);
export const capabilitiesSchema = z.array(z.string().min(1).max(TERMINAL_LIMITS.capabilityChars)).max(TERMINAL_LIMITS.capabilities);
export const stepKindSchema = z.enum(['thinking', 'tool', 'output', 'status']);
export const mirrorRoleSchema = z.enum(['user', 'assistant']);
export const answerStatusSchema = z.enum(['completed', 'failed', 'cancelled']);
export const seqSchema = z.number().int().min(0).max(TERMINAL_LIMITS.maxSeq);
export const contentSchema = z.string().max(TERMINAL_LIMITS.contentChars);
export const promptContentSchema = z.string().min(1).max(TERMINAL_LIMITS.promptChars);
export const labelSchema = z.string().max(TERMINAL_LIMITS.labelChars);

export type StepKind = z.infer<typeof stepKindSchema>;
export type MirrorRole = z.infer<typeof mirrorRoleSchema>;
export type AnswerStatus = z.infer<typeof answerStatusSchema>;

export const terminalEventSchemas = {
  TerminalRegistered: z.object({
    terminalId: z.string(),
    userId: z.string(),
    name: terminalNameSchema,
    host: terminalHostSchema,
    cwd: terminalCwdSchema.nullable(),
    capabilities: capabilitiesSchema,
    leaseSeconds: z.number().int().positive(),
    at: z.string(),
  }),
  /** `DELETE …/{tid}`: the terminal shows OFFLINE at once; it stays listed, and a later heartbeat reconnects it. */
  TerminalDisconnected: z.object({ at: z.string() }),
  TerminalReconnected: z.object({ at: z.string() }),
  TerminalThinkingSet: z.object({ thinking: z.boolean(), label: labelSchema.nullable(), at: z.string() }),
  PromptSent: z.object({ promptId: z.string(), content: promptContentSchema, sentBy: z.string(), at: z.string() }),
  /** Handed out by a poll; `delivery` counts hand-outs (a redelivery after the lease expired is 2, 3, …). */
  PromptDelivered: z.object({ promptId: z.string(), delivery: z.number().int().positive(), leaseExpiresAt: z.string(), at: z.string() }),
  PromptStepRecorded: z.object({ promptId: z.string(), seq: seqSchema, kind: stepKindSchema, content: contentSchema, at: z.string() }),
  PromptAnswered: z.object({ promptId: z.string(), content: contentSchema, status: answerStatusSchema, at: z.string() }),
  PromptCancelled: z.object({ promptId: z.string(), by: z.string(), at: z.string() }),
  ThreadEntryMirrored: z.object({ seq: seqSchema, role: mirrorRoleSchema, content: contentSchema, at: z.string() }),
};

export type TerminalEvent = EventsOf<typeof terminalEventSchemas>;

/**
 * Heartbeats go to their own operational stream (`terminalbeat-<id>`, truncated by retention) so
 * that a terminal beating every few seconds for days does not bury its thread: the terminal
 * stream keeps the audit trail (prompts, steps, answers), the beat stream only its liveness.
 */
export const terminalBeatEventSchemas = {
  TerminalHeartbeatRecorded: z.object({ terminalId: z.string(), at: z.string() }),
};

export type TerminalBeatEvent = EventsOf<typeof terminalBeatEventSchemas>;

export const TERMINAL_CATEGORY = 'terminal';
export const TERMINAL_BEAT_CATEGORY = 'terminalbeat';
export const terminalStreamId = (terminalId: string) => `${TERMINAL_CATEGORY}-${terminalId}`;
export const terminalBeatStreamId = (terminalId: string) => `${TERMINAL_BEAT_CATEGORY}-${terminalId}`;
