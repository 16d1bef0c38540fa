import { z } from 'zod';
import { loadTerminal } from '../../commands/terminals.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Principal } from '../../domain/shared/principal.js';
import { promptStatusOf, terminalStatus, type PromptState, type TerminalState } from '../../domain/terminals/index.js';
import type { Services } from '../../ports/services.js';
import { currentPrompt, getTerminal, lastHeartbeats, type PromptDoc, type TerminalDoc, type ThreadDoc } from '../../projections/terminals.js';
import { type RouteInput } from '../route.js';
import { lastEventIdOf } from '../sse.js';
import { promptSchema } from './terminals-schemas.js';

/**
 * What the terminals routes share: the views of terminals and prompts (from the read model or
 * from the log's folded state), and the checks every route makes (the CLI's credential, ownership).
 */

export type AnyInput = RouteInput<any, any, any>;

export function promptView(terminalId: string, p: PromptState | PromptDoc): z.infer<typeof promptSchema> {
  if (!('_id' in p)) {
    const s = p as PromptState;
    return {
      id: s.promptId, terminalId, content: s.content, status: promptStatusOf(s), delivery: s.deliveries, sentAt: s.sentAt, deliveredAt: s.deliveredAt,
      leaseExpiresAt: s.leaseExpiresAt, acknowledgedAt: s.acknowledgedAt, stepCount: s.stepCount, answer: s.answer, cancelledAt: s.cancelledAt,
    };
  }
  const d = p as PromptDoc;
  return {
    id: d._id, terminalId, content: d.content, status: d.status, delivery: d.deliveries, sentAt: d.sentAt, deliveredAt: d.deliveredAt,
    leaseExpiresAt: d.leaseExpiresAt, acknowledgedAt: d.acknowledgedAt, stepCount: d.stepCount, answer: d.answer, cancelledAt: d.cancelledAt,
  };
}

export async function terminalViews(services: Services, docs: TerminalDoc[]) {
  const beats = await lastHeartbeats(services.readStore, docs.map((d) => d._id));
  const now = services.now();
  return Promise.all(
    docs.map(async (doc) => {
      const lastHeartbeatAt = beats.get(doc._id) ?? null;
      const current = await currentPrompt(services.readStore, doc._id);
      return {
        id: doc._id, name: doc.name, host: doc.host, cwd: doc.cwd, capabilities: doc.capabilities,
        status: terminalStatus({ connected: doc.connected, lastHeartbeatAt }, now, doc.leaseSeconds, services.config.REMOTE_TERMINAL_OFFLINE_AFTER),
        connected: doc.connected, lastHeartbeatAt, registeredAt: doc.registeredAt, disconnectedAt: doc.disconnectedAt, leaseSeconds: doc.leaseSeconds,
        thinking: doc.thinking, currentPrompt: current ? promptView(doc._id, current) : null,
      };
    }),
  );
}

export async function terminalReply(services: Services, userId: string, terminalId: string) {
  const doc = await getTerminal(services.readStore, userId, terminalId);
  if (!doc) throw new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');
  return (await terminalViews(services, [doc]))[0];
}

export const threadView = ({ _id: _ignored, terminalId: _t, ...entry }: ThreadDoc) => entry;

// ---- helpers ----

/** The CLI side acts as a terminal: a CLI token or a signed-in session, not an API key (whose scopes are for automation). */
export function cliPrincipal(input: AnyInput): Principal {
  const principal = input.principal!;
  if (principal.credential === 'api_key') {
    throw new DomainError('CLI_CREDENTIAL_REQUIRED', 'terminal operations take a CLI token (flowctl login) or a JWT, not an API key', 'forbidden');
  }
  return principal;
}

/** Ownership from the log: the CLI's writes are decided there anyway, and a fresh terminal is there before the read model. */
export async function ownedState(input: AnyInput, terminalId: string): Promise<TerminalState> {
  const { state } = await loadTerminal(input.services.eventStore, terminalId);
  if (!state.exists || state.userId !== input.principal!.userId) throw new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');
  return state;
}

export function promptFrom(state: TerminalState, terminalId: string, promptId: string) {
  const p = state.prompts.get(promptId);
  if (!p) throw new DomainError('PROMPT_NOT_FOUND', 'prompt not found', 'not_found');
  return promptView(terminalId, p);
}

/** The stream revision the client resumes after (`Last-Event-ID` or `?lastEventId=`), -1 for the start. */
export function resumeAfter(input: AnyInput): number {
  const raw = lastEventIdOf(input.koa, /^-?\d{1,10}$/);
  return raw === null ? -1 : Math.max(-1, Number(raw));
}

