import { z } from 'zod';
import { agentScopeOf, createAgent, createAgentSession, deleteAgent, updateAgent, visibleAgent } from '../../commands/agents.js';
import { messageAtRevision, sessionEventsAfter, turnSseEvents, type TurnSseEvent } from './agents-stream.js';
import { cancelAgentMessage, deleteAgentSession, readAgentSession, sendAgentMessage, type AgentTurnPorts, type TurnEvent } from '../../commands/agents-messages.js';
import {
  agentLimitsSchema, agentSessionStreamId, agentStreamId, messageNotFound, type AgentDefinition, type AgentMessageState, type AgentSessionState,
} from '../../domain/agents/index.js';
import type { Services } from '../../ports/services.js';
import { listAgentSessions, listAgents, type AgentDoc, type AgentSessionDoc } from '../../projections/agents.js';
import { ValidationError } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { followLog, lastEventIdOf, openSse, sseReply, type SseWriter } from '../sse.js';
import { agentParams, sessionParams, messageParams, agentBody, messageBody, agentSchema, messageSchema, sessionSummarySchema, sessionSchema, ok } from './agents-schemas.js';
import { pageQuery, pageReply } from './pagination.js';

/**
 * Agents (issue 14): definitions with tools, chat sessions whose every turn is in the log, and
 * messages answered by the tool-calling loop (JSON when done, or Server-Sent Events). Another
 * tenant's agent or session answers 404. See docs/agents.md.
 */

type AnyInput = RouteInput<any, any, any>;

const tag = 'Agents';
const auth = 'bearer' as const;

// ---- views ----

function definitionOf(body: z.infer<typeof agentBody>): AgentDefinition {
  return { ...body, limits: agentLimitsSchema.parse(body.limits) };
}

function agentView(agentId: string, state: Record<string, any>) {
  return {
    id: agentId,
    name: state.name,
    description: state.description,
    provider: state.provider,
    model: state.model,
    instructions: state.instructions,
    tools: state.tools,
    skills: state.skills,
    memory: state.memory,
    limits: state.limits,
    temperature: state.temperature,
    ownerId: state.ownerId,
    orgId: state.orgId,
    workspaceId: state.workspaceId,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  };
}

const agentDocView = (doc: AgentDoc) => agentView(doc._id, { ...JSON.parse(doc.definition), ownerId: doc.ownerId, orgId: doc.orgId, workspaceId: doc.workspaceId, createdAt: doc.createdAt, updatedAt: doc.updatedAt });

const sessionDocView = (doc: AgentSessionDoc) => ({
  id: doc._id,
  agentId: doc.agentId,
  title: doc.title,
  messageCount: doc.messageCount,
  running: doc.running,
  lastFinishReason: doc.lastFinishReason,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export function messageView(m: AgentMessageState) {
  return {
    id: m.messageId,
    content: m.content,
    attachments: m.attachments,
    createdAt: m.receivedAt,
    status: m.completed ? ('completed' as const) : ('running' as const),
    answer: {
      text: m.completed?.text ?? m.streamedText,
      finishReason: m.completed?.finishReason ?? null,
      iterations: m.completed?.iterations ?? m.steps.length,
      toolCalls: m.completed?.toolCalls ?? m.toolCalls.length,
      usage: m.usage,
      cost: m.cost,
      error: m.completed?.error ?? null,
      completedAt: m.completed?.at ?? null,
    },
    toolCalls: m.toolCalls.map((c) => ({ id: c.toolCallId, iteration: c.iteration, name: c.name, input: c.input, result: c.result && { content: c.result.content, isError: c.result.isError, skipped: c.result.skipped, durationMs: c.result.durationMs } })),
    context: m.context,
  };
}

function sessionView(s: AgentSessionState) {
  const usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0 };
  let cost = 0;
  for (const m of s.messages) {
    for (const k of Object.keys(usage) as Array<keyof typeof usage>) usage[k] += m.usage[k];
    cost += m.cost;
  }
  return { id: s.sessionId!, agentId: s.agentId!, title: s.title, running: s.running, createdAt: s.createdAt!, updatedAt: s.updatedAt!, usage, cost, messages: s.messages.map(messageView) };
}

// ---- ports ----

export function agentTurnPorts(services: Services): AgentTurnPorts {
  const config = services.config;
  return {
    eventStore: services.eventStore,
    llm: services.llm,
    logger: services.logger,
    now: services.now,
    newId: services.newId,
    settings: config,
    singleProcess: !config.KAFKA_BROKERS && !config.MONGODB_URL,
    skills: services.skills,
    runnerId: services.runs.localWorkerId,
    turns: services.agentTurns,
    streamSignals: services.streamSignals,
    tools: {
      eventStore: services.eventStore,
      mcp: { eventStore: services.eventStore, config, mcp: services.mcp, now: services.now },
      runs: services.runs,
      newId: services.newId,
      runSettings: config,
      memory: services.memory,
      outbound: services.outbound,
      allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK,
    },
  };
}

const scopeOf = (input: AnyInput) => agentScopeOf(input.principal!);

// ---- streaming ----

/** Writes a turn's session events as its SSE events, in order; closes after message.completed. */
function sseSink(sse: SseWriter, sessionId: string) {
  let chain: Promise<void> = Promise.resolve();
  const send = (e: TurnSseEvent) => {
    chain = chain.then(async () => {
      await sse.send(e);
      if (e.event === 'message.completed') sse.close();
    });
  };
  return (e: TurnEvent) => {
    for (const out of turnSseEvents(e, e.revision, sessionId)) send(out);
  };
}

/** Resumes the stream of the turn that holds revision `after` (Last-Event-ID), from the log. */
async function resume(input: AnyInput, agentId: string, sessionId: string, after: number, messageId?: string) {
  const { services } = input;
  const state = await readAgentSession(agentTurnPorts(services), input.command, agentId, sessionId, scopeOf(input));
  const message = messageId ? state.messages.find((m) => m.messageId === messageId) : messageAtRevision(state, after);
  if (!message) {
    if (messageId) throw messageNotFound();
    throw new ValidationError([{ field: 'headers.last-event-id', message: 'is not the id of an event of this session' }]);
  }
  const watch = services.streamSignals.watch(agentSessionStreamId(sessionId));
  const sse = openSse(input.koa, { pingMs: services.config.AGENTS_SSE_PING_SECONDS * 1000, headers: { 'X-Message-Id': message.messageId }, now: services.now });
  void followLog(sse, {
    after: Math.max(after, message.fromRevision - 1),
    read: (from) => sessionEventsAfter(services.eventStore, sessionId, message.messageId, from),
    watch,
    pollMs: 1000,
  });
  return sseReply();
}

const lastEventIdPattern = /^\d{1,10}$/;

const sseDescription =
  'with `stream: true`: text/event-stream of named events, each with `id:` (the session stream revision): `message.started`, `message.delta` {text}, `tool.called`, `tool.result`, `message.completed` {text, finishReason, usage, cost, iterations}, `error`; `ping` every AGENTS_SSE_PING_SECONDS without id';

// ---- routes ----

export const agentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/agents',
    operationId: 'listAgents',
    summary: 'list agents of the user or organization (active workspace), most recently changed first',
    tag,
    auth,
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: 'a page of agents', schema: ok({ items: z.array(agentSchema), nextCursor: z.string().nullable() }) } },
    async handler(input) {
      const page = await listAgents(input.services.readStore, scopeOf(input), { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return pageReply(page, agentDocView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/agents',
    operationId: 'createAgent',
    summary: 'create an agent: provider, model, instructions, tools ({kind: mcp_tool|flow|memory|http}), skills, memory, limits {maxIterations 1-50 (8), maxToolCalls, maxTokens, timeoutMs}',
    tag,
    auth,
    permission: 'edit_resources',
    body: agentBody,
    responses: { 201: { description: 'created', schema: ok({ agent: agentSchema }) } },
    async handler(input) {
      const { services, command } = input;
      const agentId = services.newId();
      const written = await createAgent(services.eventStore, command, agentId, definitionOf(input.body), scopeOf(input));
      await input.settle(written.position, agentStreamId(agentId));
      return { status: 201, body: { success: true, agent: agentView(agentId, written.state) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/{agentId}',
    operationId: 'getAgent',
    summary: 'get an agent',
    tag,
    auth,
    permission: 'view_resources',
    params: agentParams,
    responses: { 200: { description: 'the agent', schema: ok({ agent: agentSchema }) }, 404: { description: 'AGENT_NOT_FOUND' } },
    async handler(input) {
      const { state } = await visibleAgent(input.services.eventStore, input.params.agentId, scopeOf(input));
      return { status: 200, body: { success: true, agent: agentView(input.params.agentId, state) } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/agents/{agentId}',
    operationId: 'updateAgent',
    summary: 'replace an agent\'s definition (added); sessions keep their history and use it from their next message',
    tag,
    auth,
    permission: 'edit_resources',
    params: agentParams,
    body: agentBody,
    responses: { 200: { description: 'the agent now', schema: ok({ agent: agentSchema }) }, 404: { description: 'AGENT_NOT_FOUND' } },
    async handler(input) {
      const { services, command, params } = input;
      const written = await updateAgent(services.eventStore, command, params.agentId, definitionOf(input.body), scopeOf(input));
      await input.settle(written.position, agentStreamId(params.agentId));
      return { status: 200, body: { success: true, agent: agentView(params.agentId, written.state) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/agents/{agentId}',
    operationId: 'deleteAgent',
    summary: 'delete an agent (added); its sessions stay readable in the log but answer 404',
    tag,
    auth,
    permission: 'edit_resources',
    params: agentParams,
    responses: { 200: { description: 'deleted', schema: ok({ agentId: z.string() }) }, 404: { description: 'AGENT_NOT_FOUND' } },
    async handler(input) {
      const { services, command, params } = input;
      const written = await deleteAgent(services.eventStore, command, params.agentId, scopeOf(input));
      await input.settle(written.position, agentStreamId(params.agentId));
      return { status: 200, body: { success: true, agentId: params.agentId } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/{agentId}/sessions',
    operationId: 'listAgentSessions',
    summary: "list an agent's chat sessions, most recently active first",
    tag,
    auth,
    permission: 'view_resources',
    params: agentParams,
    query: pageQuery,
    responses: { 200: { description: 'a page of sessions', schema: ok({ items: z.array(sessionSummarySchema), nextCursor: z.string().nullable() }) }, 404: { description: 'AGENT_NOT_FOUND' } },
    async handler(input) {
      await visibleAgent(input.services.eventStore, input.params.agentId, scopeOf(input));
      const page = await listAgentSessions(input.services.readStore, scopeOf(input), input.params.agentId, { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return pageReply(page, sessionDocView);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/agents/{agentId}/sessions',
    operationId: 'createAgentSession',
    summary: 'create a chat session',
    tag,
    auth,
    permission: 'edit_resources',
    params: agentParams,
    body: z.strictObject({ title: z.string().trim().min(1).max(200).optional() }).default({}),
    responses: { 201: { description: 'created', schema: ok({ session: sessionSchema }) }, 404: { description: 'AGENT_NOT_FOUND' } },
    async handler(input) {
      const { services, command, params } = input;
      const sessionId = services.newId();
      const written = await createAgentSession(services.eventStore, command, params.agentId, sessionId, input.body?.title ?? null, scopeOf(input));
      await input.settle(written.position, agentSessionStreamId(sessionId));
      return { status: 201, body: { success: true, session: sessionView(written.state) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/{agentId}/sessions/{sessionId}',
    operationId: 'getAgentSession',
    summary: 'get a session with its history: every message with its answer (finishReason, usage, cost), tool calls and results, and what the context budget dropped',
    tag,
    auth,
    permission: 'view_resources',
    params: sessionParams,
    responses: { 200: { description: 'the session', schema: ok({ session: sessionSchema }) }, 404: { description: 'SESSION_NOT_FOUND' } },
    async handler(input) {
      const state = await readAgentSession(agentTurnPorts(input.services), input.command, input.params.agentId, input.params.sessionId, scopeOf(input));
      return { status: 200, body: { success: true, session: sessionView(state) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/agents/{agentId}/sessions/{sessionId}',
    operationId: 'deleteAgentSession',
    summary: 'delete a session (a running turn is stopped first)',
    tag,
    auth,
    permission: 'edit_resources',
    params: sessionParams,
    responses: { 200: { description: 'deleted', schema: ok({ sessionId: z.string() }) }, 404: { description: 'SESSION_NOT_FOUND' } },
    async handler(input) {
      const { services, command, params } = input;
      const written = await deleteAgentSession(agentTurnPorts(services), command, params.agentId, params.sessionId, scopeOf(input));
      await input.settle(written.position, agentSessionStreamId(params.sessionId));
      return { status: 200, body: { success: true, sessionId: params.sessionId } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/agents/{agentId}/sessions/{sessionId}/messages',
    operationId: 'sendAgentMessage',
    summary:
      'send a message to the agent: runs the tool-calling loop (model → tool calls, concurrent → model …) until an answer or a limit (finishReason stop, max_iterations, max_tool_calls, max_tokens, timeout, budget, cancelled, error). JSON when done, or Server-Sent Events with `stream: true`. With a `Last-Event-ID` header it sends nothing new: it resumes the stream of the turn that event belongs to, from the log. 409 SESSION_BUSY (details.messageId) while a turn runs',
    tag,
    auth,
    permission: 'edit_resources',
    params: sessionParams,
    body: messageBody,
    responses: {
      200: { description: `the message with its answer (JSON), or ${sseDescription}`, schema: ok({ message: messageSchema }) },
      400: { description: 'VALIDATION_FAILED, UNKNOWN_PROVIDER, PROVIDER_NOT_CONFIGURED' },
      404: { description: 'AGENT_NOT_FOUND or SESSION_NOT_FOUND' },
      409: { description: 'SESSION_BUSY: a turn is running (details.messageId)' },
    },
    errors: [402, 503],
    async handler(input) {
      const { services, command, params, body, koa } = input;
      const last = lastEventIdOf(koa, lastEventIdPattern);
      if (last !== null) return resume(input, params.agentId, params.sessionId, Number(last));
      const ports = agentTurnPorts(services);
      const turn = await sendAgentMessage(ports, command, { agentId: params.agentId, sessionId: params.sessionId, scope: scopeOf(input), content: body.content, attachments: body.attachments });
      if (!body.stream) {
        await turn.done;
        // A JSON answer is a finished turn: the next read (the session, its list) must show it (issue 38).
        const [lastEvent] = await services.eventStore.readStream(agentSessionStreamId(params.sessionId), { direction: 'backwards', maxCount: 1 });
        await input.settle(lastEvent?.position ?? null, agentSessionStreamId(params.sessionId));
        const state = await readAgentSession(ports, command, params.agentId, params.sessionId, scopeOf(input));
        const message = state.messages.find((m) => m.messageId === turn.messageId)!;
        return { status: 200, body: { success: true, message: messageView(message) }, headers: { 'X-Message-Id': turn.messageId } };
      }
      const sse = openSse(koa, { pingMs: services.config.AGENTS_SSE_PING_SECONDS * 1000, headers: { 'X-Message-Id': turn.messageId }, now: services.now });
      // A client that leaves stops listening; the turn goes on (cancel it explicitly) and stays in the log.
      const stop = turn.listen(sseSink(sse, params.sessionId));
      sse.signal.addEventListener('abort', stop, { once: true });
      return sseReply();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/agents/{agentId}/sessions/{sessionId}/messages/{messageId}/events',
    operationId: 'streamAgentMessageEvents',
    summary: "a message's turn as Server-Sent Events from the log (added): the same events as a streamed send, replayed then followed until message.completed; with Last-Event-ID (or ?lastEventId=) only those after it",
    tag,
    auth,
    permission: 'view_resources',
    params: messageParams,
    query: z.strictObject({ lastEventId: z.string().regex(lastEventIdPattern).optional() }),
    responses: { 200: { description: sseDescription }, 404: { description: 'SESSION_NOT_FOUND or MESSAGE_NOT_FOUND' } },
    errors: [503],
    async handler(input) {
      const last = lastEventIdOf(input.koa, lastEventIdPattern);
      return resume(input, input.params.agentId, input.params.sessionId, last === null ? -1 : Number(last), input.params.messageId);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/agents/{agentId}/sessions/{sessionId}/messages/{messageId}/cancel',
    operationId: 'cancelAgentMessage',
    summary:
      'stop a running turn (added): the model call and every tool in flight are aborted, no tool starts after it, and the answer keeps the text produced so far (finishReason cancelled). A finished message answers as it is',
    tag,
    auth,
    permission: 'edit_resources',
    params: messageParams,
    responses: { 200: { description: 'the message as it stands', schema: ok({ message: messageSchema }) }, 404: { description: 'SESSION_NOT_FOUND or MESSAGE_NOT_FOUND' } },
    async handler(input) {
      const { services, command, params } = input;
      const message = await cancelAgentMessage(agentTurnPorts(services), command, params.agentId, params.sessionId, params.messageId, scopeOf(input));
      return { status: 200, body: { success: true, message: messageView(message) } };
    },
  }),
];
