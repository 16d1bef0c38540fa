import { z } from 'zod';
import {
  answerPrompt,
  cancelPrompt,
  disconnectTerminal,
  heartbeat,
  loadTerminal,
  mirrorEntries,
  pollNextPrompt,
  recordSteps,
  registerTerminal,
  sendPrompt,
  setThinking,
} from '../../commands/terminals.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { Principal } from '../../domain/shared/principal.js';
import {
  cancelledInFlight,
  promptStatusOf,
  terminalNoticeOf,
  terminalStatus,
  terminalStreamId,
  threadEntryOf,
  TERMINAL_LIMITS,
  type PromptState,
  type TerminalEvent,
  type TerminalState,
} from '../../domain/terminals/index.js';
import type { Services } from '../../infra/ports/services.js';
import { currentPrompt, getPrompt, getTerminal, lastHeartbeats, listTerminals, listThread, type PromptDoc, type TerminalDoc, type ThreadDoc } from '../../projections/terminals.js';
import { defineRoute, type RouteInput } from '../route.js';
import { followLog, lastEventIdOf, openSse, sseReply, type SseEvent } from '../sse.js';
import { pageQuery } from './pagination.js';
import {
  terminalParams,
  promptParams,
  terminalStatusSchema,
  promptSchema,
  terminalSchema,
  threadEntrySchema,
  ok,
  terminalAnswer,
  promptAnswer,
  registerBody,
  stepsBody,
  answerBody,
  mirrorBody,
  thinkingBody,
  promptBody,
  nextQuery,
  eventsQuery,
  errors,
  cliErrors,
} from './terminals-schemas.js';

/**
 * Remote control of terminals (issue 17). The CLI side (register, heartbeat, disconnect, long
 * poll, steps, answer, mirror, thinking) takes a CLI token or a JWT; the web side (list, send,
 * cancel, thread, events) any bearer credential. Everything is the caller's own: another user's
 * terminal or prompt answers 404.
 */

type AnyInput = RouteInput<any, any, any>;

// ---- views ----

function promptView(terminalId: string, p: PromptState | PromptDoc): z.infer<typeof promptSchema> {
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

async function terminalViews(services: Services, docs: TerminalDoc[]) {
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

async function terminalReply(services: Services, userId: string, terminalId: string) {
  const doc = await getTerminal(services.readStore, userId, terminalId);
  if (!doc) throw new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');
  return (await terminalViews(services, [doc]))[0];
}

const threadView = ({ _id: _ignored, terminalId: _t, ...entry }: ThreadDoc) => entry;

// ---- helpers ----

/** The CLI side acts as a terminal: a CLI token or a signed-in session, not an API key (whose scopes are for automation). */
function cliPrincipal(input: AnyInput): Principal {
  const principal = input.principal!;
  if (principal.credential === 'api_key') {
    throw new DomainError('CLI_CREDENTIAL_REQUIRED', 'terminal operations take a CLI token (flowctl login) or a JWT, not an API key', 'forbidden');
  }
  return principal;
}

/** Ownership from the log: the CLI's writes are decided there anyway, and a fresh terminal is there before the read model. */
async function ownedState(input: AnyInput, terminalId: string): Promise<TerminalState> {
  const { state } = await loadTerminal(input.services.eventStore, terminalId);
  if (!state.exists || state.userId !== input.principal!.userId) throw new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');
  return state;
}

function promptFrom(state: TerminalState, terminalId: string, promptId: string) {
  const p = state.prompts.get(promptId);
  if (!p) throw new DomainError('PROMPT_NOT_FOUND', 'prompt not found', 'not_found');
  return promptView(terminalId, p);
}

/** The stream revision the client resumes after (`Last-Event-ID` or `?lastEventId=`), -1 for the start. */
function resumeAfter(input: AnyInput): number {
  const raw = lastEventIdOf(input.koa, /^-?\d{1,10}$/);
  return raw === null ? -1 : Math.max(-1, Number(raw));
}

/** Raw events read per page; a page of heartbeats only is skipped without waiting. */
const PAGE = 200;

/**
 * Streams `terminal-<id>` from after `after`: each thread entry as `event: entry`, the terminal's
 * own events as `event: terminal`, both with the stream revision as id; `event: ping` every
 * REMOTE_SSE_PING_SECONDS without an id. Wakes on appends (one shared subscription per process);
 * api/sse.ts stops writing while the socket is full and releases the waiter when the client goes.
 */
function eventStream(input: AnyInput, terminalId: string, after: number) {
  const { services, koa } = input;
  const streamId = terminalStreamId(terminalId);
  // Before the headers: too many waiters still answers 503 TOO_MANY_WAITERS.
  const watch = services.streamSignals.watch(streamId);
  const sse = openSse(koa, { pingMs: services.config.REMOTE_SSE_PING_SECONDS * 1000, now: services.now });
  void followLog(sse, {
    after,
    watch,
    pollMs: services.config.REMOTE_SSE_PING_SECONDS * 1000,
    async read(position) {
      const frames: SseEvent[] = [];
      let next = position;
      for (;;) {
        const events = await services.eventStore.readStream(streamId, { fromRevision: next + 1, maxCount: PAGE });
        for (const recorded of events) {
          const event = recorded as unknown as TerminalEvent;
          const entry = threadEntryOf(event, recorded.revision);
          const notice = entry ? null : terminalNoticeOf(event, recorded.revision);
          if (entry) frames.push({ event: 'entry', id: recorded.revision, data: entry });
          else if (notice) frames.push({ event: 'terminal', id: recorded.revision, data: notice });
          next = recorded.revision;
        }
        if (frames.length > 0 || events.length < PAGE) return { events: frames, next, done: false };
      }
    },
  });
}

// ---- routes ----

const tag = 'Remote control';

export const terminalRoutes = [
  defineRoute({
    method: 'POST',
    path: '/remote/terminals',
    operationId: 'registerTerminal',
    summary: 'CLI: register a terminal session (counts as its first heartbeat); 201 {terminal, leaseSeconds}',
    tag,
    auth: 'bearer',
    body: registerBody,
    responses: { 201: { description: 'registered', schema: ok({ terminal: terminalSchema, leaseSeconds: z.number().int() }) }, ...cliErrors },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { body, services } = input;
      const terminalId = services.newId();
      const leaseSeconds = services.config.REMOTE_TERMINAL_LEASE_SECONDS;
      const result = await registerTerminal(services.eventStore, input.command, {
        terminalId, userId: principal.userId, name: body.name, host: body.host, cwd: body.cwd ?? null, capabilities: body.capabilities ?? [], leaseSeconds,
      });
      await input.settle(result.position, terminalStreamId(terminalId));
      return { status: 201, body: { success: true, terminal: await terminalReply(services, principal.userId, terminalId), leaseSeconds } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/heartbeat',
    operationId: 'terminalHeartbeat',
    summary: 'CLI: heartbeat (keeps the lease; reconnects a disconnected terminal); lists delivered prompts the web cancelled',
    tag,
    auth: 'bearer',
    params: terminalParams,
    responses: {
      200: { description: 'the terminal', schema: ok({ terminal: terminalSchema, leaseSeconds: z.number().int(), cancelledPromptIds: z.array(z.string()) }) },
      ...cliErrors,
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, services } = input;
      const result = await heartbeat(services.eventStore, input.command, principal.userId, params.terminalId);
      if (result.terminalPosition !== null) await input.settle(result.terminalPosition, terminalStreamId(params.terminalId));
      await input.settle(result.position, `terminalbeat-${params.terminalId}`);
      const terminal = await terminalReply(services, principal.userId, params.terminalId);
      return { status: 200, body: { success: true, terminal, leaseSeconds: terminal.leaseSeconds, cancelledPromptIds: cancelledInFlight(result.state) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/remote/terminals/{terminalId}',
    operationId: 'disconnectTerminal',
    summary: 'CLI: disconnect (the terminal shows OFFLINE and stays listed; prompts sent meanwhile wait, a heartbeat reconnects it)',
    tag,
    auth: 'bearer',
    params: terminalParams,
    responses: { 200: { description: 'disconnected (repeating it changes nothing)', schema: terminalAnswer }, ...cliErrors },
    async handler(input) {
      const principal = cliPrincipal(input);
      const result = await disconnectTerminal(input.services.eventStore, input.command, principal.userId, input.params.terminalId);
      await input.settle(result.position, terminalStreamId(input.params.terminalId));
      return { status: 200, body: { success: true, terminal: await terminalReply(input.services, principal.userId, input.params.terminalId) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals/{terminalId}/prompts/next',
    operationId: 'nextTerminalPrompt',
    summary:
      'CLI: long-poll the next prompt (wait seconds, 0-300, capped by REMOTE_POLL_MAX_WAIT_SECONDS; default 30). Answers at once with a queued prompt, or one whose lease ran out unacknowledged (delivery 2, 3, …: dedupe by id); acknowledge by posting a step or the answer before leaseExpiresAt',
    tag,
    auth: 'bearer',
    params: terminalParams,
    query: nextQuery,
    responses: {
      200: {
        description: 'prompt is null when the wait ended without one; cancelledPromptIds lists delivered prompts the web cancelled (stop them, answer status cancelled)',
        schema: ok({ prompt: promptSchema.nullable(), cancelledPromptIds: z.array(z.string()) }),
      },
      ...cliErrors,
      503: { description: 'TOO_MANY_WAITERS: the server holds REMOTE_MAX_WAITERS waiting requests (Retry-After)' },
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, query, services, koa } = input;
      const abort = new AbortController();
      const stop = () => abort.abort();
      koa.req.on('close', stop);
      try {
        const waitMs = Math.min(query.wait, services.config.REMOTE_POLL_MAX_WAIT_SECONDS) * 1000;
        const answer = await pollNextPrompt(
          { eventStore: services.eventStore, streamSignals: services.streamSignals, now: services.now },
          input.command,
          principal.userId,
          params.terminalId,
          { waitMs, leaseSeconds: services.config.REMOTE_PROMPT_LEASE_SECONDS, signal: abort.signal },
        );
        if (answer.position !== null) await input.settle(answer.position, terminalStreamId(params.terminalId));
        return {
          status: 200,
          body: { success: true, prompt: answer.prompt ? promptView(params.terminalId, answer.prompt) : null, cancelledPromptIds: answer.cancelledPromptIds },
          headers: { 'Cache-Control': 'no-store' },
        };
      } catch (err) {
        if (err instanceof DomainError && err.code === 'TOO_MANY_WAITERS') koa.set('Retry-After', '1');
        throw err;
      } finally {
        koa.req.off('close', stop);
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/prompts/{promptId}/answer',
    operationId: 'answerTerminalPrompt',
    summary: 'CLI: deliver a prompt\'s answer (acknowledges the delivery). Repeating the same answer is a no-op (duplicate: true); a different one is 409 PROMPT_ALREADY_ANSWERED',
    tag,
    auth: 'bearer',
    params: promptParams,
    body: answerBody,
    responses: {
      200: { description: 'the prompt (a cancelled prompt keeps status cancelled; its answer is kept)', schema: ok({ prompt: promptSchema, duplicate: z.boolean() }) },
      ...cliErrors,
      409: { description: 'PROMPT_NOT_DELIVERED (never handed out) / PROMPT_ALREADY_ANSWERED (with another answer)' },
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, body, services } = input;
      const result = await answerPrompt(services.eventStore, input.command, principal.userId, params.terminalId, params.promptId, body.content, body.status);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      return { status: 200, body: { success: true, prompt: promptFrom(result.state, params.terminalId, params.promptId), duplicate: result.events.length === 0 } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/prompts/{promptId}/steps',
    operationId: 'recordTerminalPromptSteps',
    summary: 'CLI: stream intermediate steps (the first acknowledges the delivery); idempotent by seq (a seq already recorded is skipped)',
    tag,
    auth: 'bearer',
    params: promptParams,
    body: stepsBody,
    responses: {
      200: { description: 'accepted: seqs recorded now; duplicates: seqs recorded before', schema: ok({ prompt: promptSchema, accepted: z.array(z.number().int()), duplicates: z.array(z.number().int()) }) },
      ...cliErrors,
      409: { description: 'PROMPT_NOT_DELIVERED / PROMPT_ALREADY_ANSWERED (new seqs after the answer) / TOO_MANY_STEPS' },
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, body, services } = input;
      const result = await recordSteps(services.eventStore, input.command, principal.userId, params.terminalId, params.promptId, body.steps);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      const accepted = result.events.map((e) => (e.type === 'PromptStepRecorded' ? e.data.seq : -1));
      const duplicates = [...new Set(body.steps.map((s) => s.seq).filter((seq) => !accepted.includes(seq)))];
      return { status: 200, body: { success: true, prompt: promptFrom(result.state, params.terminalId, params.promptId), accepted, duplicates } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/mirror',
    operationId: 'mirrorTerminalThread',
    summary: "CLI: mirror locally typed (role user) or answered (role assistant) text into the terminal's thread; idempotent by seq (per terminal)",
    tag,
    auth: 'bearer',
    params: terminalParams,
    body: mirrorBody,
    responses: { 200: { description: 'accepted and duplicate seqs', schema: ok({ accepted: z.array(z.number().int()), duplicates: z.array(z.number().int()) }) }, ...cliErrors },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, body, services } = input;
      const result = await mirrorEntries(services.eventStore, input.command, principal.userId, params.terminalId, body.entries);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      const accepted = result.events.map((e) => (e.type === 'ThreadEntryMirrored' ? e.data.seq : -1));
      const duplicates = [...new Set(body.entries.map((s) => s.seq).filter((seq) => !accepted.includes(seq)))];
      return { status: 200, body: { success: true, accepted, duplicates } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/remote/terminals/{terminalId}/thinking',
    operationId: 'setTerminalThinking',
    summary: 'CLI: shared thinking state (shown in the terminal list and streamed as event: terminal)',
    tag,
    auth: 'bearer',
    params: terminalParams,
    body: thinkingBody,
    responses: { 200: { description: 'the terminal', schema: terminalAnswer }, ...cliErrors },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, body, services } = input;
      const result = await setThinking(services.eventStore, input.command, principal.userId, params.terminalId, body.thinking, body.label ?? null);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      return { status: 200, body: { success: true, terminal: await terminalReply(services, principal.userId, params.terminalId) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals',
    operationId: 'listTerminals',
    summary: "web: the user's terminals, newest first (status, last heartbeat, current prompt; paginated)",
    tag,
    auth: 'bearer',
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: ok({ items: z.array(terminalSchema), nextCursor: z.string().nullable() }) }, ...errors },
    async handler(input) {
      const page = await listTerminals(input.services.readStore, input.principal!.userId, input.query.limit, input.query.cursor ?? null);
      return { status: 200, body: { success: true, items: await terminalViews(input.services, page.items), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals/{terminalId}',
    operationId: 'getTerminal',
    summary: 'web: one terminal (added)',
    tag,
    auth: 'bearer',
    params: terminalParams,
    responses: { 200: { description: 'the terminal', schema: terminalAnswer }, ...errors },
    async handler(input) {
      return { status: 200, body: { success: true, terminal: await terminalReply(input.services, input.principal!.userId, input.params.terminalId) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/prompts',
    operationId: 'sendTerminalPrompt',
    summary: 'web: send a prompt to a terminal; 202 {prompt} with status queued (it waits while the terminal is OFFLINE and is delivered on its next poll)',
    tag,
    auth: 'bearer',
    params: terminalParams,
    body: promptBody,
    responses: {
      202: { description: 'queued', schema: ok({ prompt: promptSchema, terminalStatus: terminalStatusSchema }) },
      ...errors,
      409: { description: `TOO_MANY_OPEN_PROMPTS (more than ${TERMINAL_LIMITS.openPrompts} neither answered nor cancelled)` },
    },
    async handler(input) {
      const { params, body, services, principal } = input;
      const promptId = services.newId();
      const result = await sendPrompt(services.eventStore, input.command, principal!.userId, params.terminalId, promptId, body.content);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      const terminal = await terminalReply(services, principal!.userId, params.terminalId);
      return { status: 202, body: { success: true, prompt: promptFrom(result.state, params.terminalId, promptId), terminalStatus: terminal.status } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals/{terminalId}/prompts/{promptId}',
    operationId: 'getTerminalPrompt',
    summary: 'web: one prompt with its status and answer (added)',
    tag,
    auth: 'bearer',
    params: promptParams,
    responses: { 200: { description: 'the prompt', schema: promptAnswer }, ...errors },
    async handler(input) {
      await terminalReply(input.services, input.principal!.userId, input.params.terminalId);
      const doc = await getPrompt(input.services.readStore, input.principal!.userId, input.params.terminalId, input.params.promptId);
      if (!doc) throw new DomainError('PROMPT_NOT_FOUND', 'prompt not found', 'not_found');
      return { status: 200, body: { success: true, prompt: promptView(input.params.terminalId, doc) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/remote/terminals/{terminalId}/prompts/{promptId}/cancel',
    operationId: 'cancelTerminalPrompt',
    summary: 'web: cancel a prompt (added). A queued one is never delivered; a delivered one shows in the CLI\'s next poll or heartbeat (cancelledPromptIds). Repeating it is a no-op',
    tag,
    auth: 'bearer',
    params: promptParams,
    responses: { 200: { description: 'the prompt, status cancelled', schema: promptAnswer }, ...errors, 409: { description: 'PROMPT_ALREADY_ANSWERED' } },
    async handler(input) {
      const { params, services, principal } = input;
      const result = await cancelPrompt(services.eventStore, input.command, principal!.userId, params.terminalId, params.promptId);
      await input.settle(result.position, terminalStreamId(params.terminalId));
      return { status: 200, body: { success: true, prompt: promptFrom(result.state, params.terminalId, params.promptId) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals/{terminalId}/thread',
    operationId: 'listTerminalThread',
    summary: "web: the terminal's thread in order (prompts, deliveries, steps, answers, cancels, mirrored entries; added, paginated). seq is the SSE event id",
    tag,
    auth: 'bearer',
    params: terminalParams,
    query: pageQuery,
    responses: { 200: { description: 'a page, oldest first', schema: ok({ items: z.array(threadEntrySchema), nextCursor: z.string().nullable() }) }, ...errors },
    async handler(input) {
      const { params, query, services, principal } = input;
      if (!(await getTerminal(services.readStore, principal!.userId, params.terminalId))) throw new DomainError('TERMINAL_NOT_FOUND', 'terminal not found', 'not_found');
      const page = await listThread(services.readStore, params.terminalId, query.limit, query.cursor ?? null);
      return { status: 200, body: { success: true, items: page.items.map(threadView), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/remote/terminals/{terminalId}/events',
    operationId: 'streamTerminalEvents',
    summary:
      "web: the thread as Server-Sent Events (added): `event: entry` (a thread entry) and `event: terminal` (registered, disconnected, reconnected, thinking), each with `id:` the entry's seq; `event: ping` every 15 s. Resume with the Last-Event-ID header (or ?lastEventId=): the stream continues right after it",
    tag,
    auth: 'bearer',
    params: terminalParams,
    query: eventsQuery,
    responses: { 200: { description: 'text/event-stream' }, ...errors, 503: { description: 'TOO_MANY_WAITERS' } },
    async handler(input) {
      const after = resumeAfter(input);
      await ownedState(input, input.params.terminalId);
      eventStream(input, input.params.terminalId, after);
      return sseReply();
    },
  }),
];
