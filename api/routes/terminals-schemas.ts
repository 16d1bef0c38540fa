import { z } from 'zod';
import {
  answerStatusSchema,
  capabilitiesSchema,
  contentSchema,
  labelSchema,
  mirrorRoleSchema,
  promptContentSchema,
  seqSchema,
  stepKindSchema,
  terminalCwdSchema,
  terminalHostSchema,
  terminalNameSchema,
  TERMINAL_LIMITS,
} from '../../domain/terminals/index.js';

/** Schemas of the remote-control routes (terminals.ts): parameters, bodies, answers; the OpenAPI document shows them. */

export const idParam = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
export const terminalParams = z.strictObject({ terminalId: idParam });
export const promptParams = z.strictObject({ terminalId: idParam, promptId: idParam });

export const terminalStatusSchema = z.enum(['ONLINE', 'STALE', 'OFFLINE']);
export const promptStatusSchema = z.enum(['queued', 'delivered', 'running', 'completed', 'failed', 'cancelled']);

export const promptSchema = z.object({
  id: z.string(),
  terminalId: z.string(),
  content: z.string(),
  status: promptStatusSchema,
  /** How many times it was handed out (2+ = redelivered after its lease ran out unacknowledged). */
  delivery: z.number().int(),
  sentAt: z.string(),
  deliveredAt: z.string().nullable(),
  leaseExpiresAt: z.string().nullable(),
  acknowledgedAt: z.string().nullable(),
  stepCount: z.number().int(),
  answer: z.object({ content: z.string(), status: answerStatusSchema, at: z.string() }).nullable(),
  cancelledAt: z.string().nullable(),
});

export const terminalSchema = z.object({
  id: z.string(),
  name: z.string(),
  host: z.string(),
  cwd: z.string().nullable(),
  capabilities: z.array(z.string()),
  status: terminalStatusSchema,
  /** False after DELETE until the next heartbeat reconnects it. */
  connected: z.boolean(),
  lastHeartbeatAt: z.string().nullable(),
  registeredAt: z.string(),
  disconnectedAt: z.string().nullable(),
  leaseSeconds: z.number().int(),
  thinking: z.object({ thinking: z.boolean(), label: z.string().nullable(), at: z.string() }).nullable(),
  /** The oldest prompt neither answered nor cancelled (queued, delivered or running), or null. */
  currentPrompt: promptSchema.nullable(),
});

export const threadEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  type: z.enum(['prompt', 'delivered', 'step', 'answer', 'cancelled', 'mirror']),
  promptId: z.string().nullable(),
  role: z.enum(['user', 'assistant']).nullable(),
  kind: stepKindSchema.nullable(),
  clientSeq: z.number().int().nullable(),
  content: z.string().nullable(),
  status: answerStatusSchema.nullable(),
  delivery: z.number().int().nullable(),
});

export const ok = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });
export const terminalAnswer = ok({ terminal: terminalSchema });
export const promptAnswer = ok({ prompt: promptSchema });

export const registerBody = z.strictObject({
  name: terminalNameSchema,
  host: terminalHostSchema,
  cwd: terminalCwdSchema.optional(),
  capabilities: capabilitiesSchema.optional(),
});
export const stepsBody = z.strictObject({
  steps: z.array(z.strictObject({ seq: seqSchema, kind: stepKindSchema, content: contentSchema })).min(1).max(TERMINAL_LIMITS.stepsPerCall),
});
export const answerBody = z.strictObject({ content: contentSchema, status: answerStatusSchema });
export const mirrorBody = z.strictObject({
  entries: z.array(z.strictObject({ seq: seqSchema, role: mirrorRoleSchema, content: contentSchema })).min(1).max(TERMINAL_LIMITS.entriesPerCall),
});
export const thinkingBody = z.strictObject({ thinking: z.boolean(), label: labelSchema.optional() });
export const promptBody = z.strictObject({ content: promptContentSchema });
export const nextQuery = z.strictObject({ wait: z.coerce.number().int().min(0).max(300).default(30) });
export const eventsQuery = z.strictObject({ lastEventId: z.string().regex(/^-?\d{1,10}$/).optional() });

export const errors = {
  400: { description: 'VALIDATION_FAILED (details.fields names the field)' },
  401: { description: 'UNAUTHENTICATED' },
  404: { description: "TERMINAL_NOT_FOUND / PROMPT_NOT_FOUND (another user's too)" },
};
export const cliErrors = { ...errors, 403: { description: 'CLI_CREDENTIAL_REQUIRED: an API key cannot act as a terminal (use a CLI token or a JWT)' } };

