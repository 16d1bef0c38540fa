import { z } from 'zod';
import { cancelPrompt, sendPrompt } from '../../commands/terminals.js';
import { DomainError } from '../../domain/shared/decider.js';
import { terminalNoticeOf, terminalStreamId, threadEntryOf, TERMINAL_LIMITS, type TerminalEvent } from '../../domain/terminals/index.js';
import { getPrompt, getTerminal, listTerminals, listThread } from '../../projections/terminals.js';
import { defineRoute } from '../route.js';
import { followLog, openSse, sseReply, type SseEvent } from '../sse.js';
import { pageQuery } from './pagination.js';
import { terminalParams, promptParams, terminalStatusSchema, promptSchema, terminalSchema, threadEntrySchema, ok, terminalAnswer, promptAnswer, promptBody, eventsQuery, errors } from './terminals-schemas.js';
import { terminalCliRoutes } from './terminals-cli.js';
import { ownedState, promptFrom, promptView, resumeAfter, terminalReply, terminalViews, threadView, type AnyInput } from './terminals-views.js';

/**
 * Remote control of terminals (issue 17). The CLI side is in terminals-cli.ts; the web side here
 * (list, send, cancel, thread, events) takes any bearer credential. Everything is the caller's
 * own: another user's terminal or prompt answers 404.
 */

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
  ...terminalCliRoutes,
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

