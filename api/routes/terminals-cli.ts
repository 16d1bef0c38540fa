import { z } from 'zod';
import { answerPrompt, disconnectTerminal, heartbeat, mirrorEntries, pollNextPrompt, recordSteps, registerTerminal, setThinking, type SlotPolicy } from '../../commands/terminals.js';
import { DomainError } from '../../domain/shared/decider.js';
import { cancelledInFlight, terminalStreamId } from '../../domain/terminals/index.js';
import { defineRoute } from '../route.js';
import { terminalParams, promptParams, promptSchema, terminalSchema, ok, terminalAnswer, registerBody, stepsBody, answerBody, mirrorBody, thinkingBody, nextQuery, cliErrors } from './terminals-schemas.js';
import { cliPrincipal, promptFrom, terminalReply, promptView } from './terminals-views.js';

/**
 * Remote control of terminals, the CLI side (issue 17): register, heartbeat, disconnect, long
 * poll, steps, answer, mirror, thinking. A CLI token or a JWT, never an API key; everything is
 * the caller's own (another user's terminal or prompt answers 404).
 */

const tag = 'Remote control';

const slotPolicy = (config: { REMOTE_MAX_TERMINALS_PER_USER: number; REMOTE_TERMINAL_OFFLINE_AFTER: number }): SlotPolicy => ({
  limit: config.REMOTE_MAX_TERMINALS_PER_USER,
  offlineAfterSeconds: config.REMOTE_TERMINAL_OFFLINE_AFTER,
});

export const terminalCliRoutes = [
  defineRoute({
    method: 'POST',
    path: '/remote/terminals',
    operationId: 'registerTerminal',
    summary: 'CLI: register a terminal session (counts as its first heartbeat); 201 {terminal, leaseSeconds}',
    tag,
    auth: 'bearer',
    body: registerBody,
    responses: {
      201: { description: 'registered', schema: ok({ terminal: terminalSchema, leaseSeconds: z.number().int() }) },
      ...cliErrors,
      409: { description: 'TOO_MANY_TERMINALS: the user has REMOTE_MAX_TERMINALS_PER_USER live terminals (disconnect one; one silent for REMOTE_TERMINAL_OFFLINE_AFTER is freed)' },
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { body, services } = input;
      const terminalId = services.newId();
      const leaseSeconds = services.config.REMOTE_TERMINAL_LEASE_SECONDS;
      const result = await registerTerminal(services.eventStore, input.command, {
        terminalId, userId: principal.userId, name: body.name, host: body.host, cwd: body.cwd ?? null, capabilities: body.capabilities ?? [], leaseSeconds,
      }, slotPolicy(services.config));
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
      409: { description: 'TOO_MANY_TERMINALS: reconnecting a disconnected terminal needs a free slot; it stays OFFLINE' },
    },
    async handler(input) {
      const principal = cliPrincipal(input);
      const { params, services } = input;
      const result = await heartbeat(services.eventStore, input.command, principal.userId, params.terminalId, slotPolicy(services.config));
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
];
