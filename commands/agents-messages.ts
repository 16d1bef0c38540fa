import {
  agentSessionDecider, agentSessionStreamId, messageNotFound,
  type AgentDefinition, type AgentFinishReason, type AgentMessageState, type AgentScope, type AgentSessionState, type AgentTurnEvent,
} from '../domain/agents/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { LLM_PROVIDER_IDS, type LlmGateway, type LlmMessage, type LlmProviderId } from '../ports/llm.js';
import type { LocalWork } from '../ports/local-work.js';
import type { Logger } from '../ports/logger.js';
import type { AppendWatch, StreamSignals } from '../ports/stream-signals.js';
import { sleep } from '../lib/sleep.js';
import { ATTR, eventAttributes, inSpan } from '../lib/tracing.js';
import { runAgentLoop, type AgentTool, type LoopEvent, type LoopOutcome } from './agents-loop.js';
import { resolveAgentTools, type AgentToolPorts } from './agents-tools.js';
import { estimateTokens, historyWithin, userText } from './agents-history.js';
import { loopSkills } from './skills-tools.js';
import type { SkillsReadModel } from '../ports/skills.js';
import { loadAgentSession, visibleAgent, visibleSession } from './agents.js';
import { handleAtContextTime, type CommandContext } from './handle.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * A turn of an agent session: the user's message is recorded (the session is busy until the turn
 * ends: another message answers 409 SESSION_BUSY), the history is folded from the session's
 * stream within the context budget, the tool-calling loop runs in this process, and every delta
 * (coalesced while an append is in flight), model step, tool call and result is appended to the
 * session stream before it is handed to listeners (SSE) — so what a client saw is in the log and
 * a client that drops resumes from it with Last-Event-ID (the event's stream revision).
 *
 * A turn ends with AgentMessageCompleted. Cancel: RequestCancel records the request and aborts the
 * turn when this process runs it (another process sees it at its next append). A turn whose
 * process is gone (crash) is ended as `interrupted` when the session is next read or written:
 * at once in a single-process service, else once AGENTS_RECOVERY_GRACE_MS passed its deadline;
 * the partial text streamed before the crash is kept.
 */
export interface AgentTurnPorts {
  eventStore: EventStore;
  llm: LlmGateway;
  tools: AgentToolPorts;
  logger: Logger;
  now(): Date;
  newId(): string;
  settings: { AGENTS_CONTEXT_TOKENS: number; AGENTS_RECOVERY_GRACE_MS: number };
  /** True when this process is the only one that can run turns (embedded configuration). */
  singleProcess: boolean;
  /** The skills read model: an agent's skills (by id) are described in its system prompt, their content loaded with `load_skill`. */
  skills?: SkillsReadModel;
  /** This service, as recorded in each turn it runs (its worker id: one per service). */
  runnerId: string;
  /** The turns this service runs, by message id (one registry per service, from the container). */
  turns: LocalWork<unknown>;
  /** Wakes a running turn when its session gets an event, so a cancel recorded by another process reaches it at once. */
  streamSignals?: StreamSignals;
}

/** A session event of the running turn, as appended (the route turns it into what its client sees). */
export interface TurnEvent {
  type: string;
  data: unknown;
  revision: number;
}

interface RunningTurn {
  controller: AbortController;
  done: Promise<LoopOutcome | null>;
  listeners: Set<(e: TurnEvent) => void>;
  /** Events already handed out (a listener that joins late gets them first). */
  sent: TurnEvent[];
}

// ---- recovery of a turn whose process is gone ----

function isStale(ports: AgentTurnPorts, m: AgentMessageState): boolean {
  if (ports.turns.has(m.messageId)) return false;
  if (ports.singleProcess || m.runner === ports.runnerId) return true;
  return ports.now().getTime() > Date.parse(m.deadline) + ports.settings.AGENTS_RECOVERY_GRACE_MS;
}

/** Ends the session's running turn as `interrupted` when no process runs it any more; returns the state after. */
export async function recoverStaleTurn(ports: AgentTurnPorts, context: CommandContext, sessionId: string, state: AgentSessionState): Promise<AgentSessionState> {
  const m = state.running ? state.messages.find((x) => x.messageId === state.running) : undefined;
  if (!m || !isStale(ports, m)) return state;
  ports.logger.warn({ sessionId, messageId: m.messageId, runner: m.runner }, 'agent turn interrupted (its process is gone): ended as interrupted');
  const result = await handleAtContextTime(ports.eventStore, { ...context, now: ports.now() }, agentSessionStreamId(sessionId), agentSessionDecider, {
    type: 'CompleteMessage',
    messageId: m.messageId,
    text: m.streamedText,
    finishReason: 'interrupted',
    iterations: m.steps.length,
    toolCalls: m.toolCalls.filter((c) => !c.result?.skipped).length,
    usage: m.usage,
    cost: m.cost,
    error: null,
  });
  return result.state;
}

/** The session, visible to the scope, with a crashed turn ended first. */
export async function readAgentSession(ports: AgentTurnPorts, context: CommandContext, agentId: string, sessionId: string, scope: AgentScope) {
  const { state } = await visibleSession(ports.eventStore, agentId, sessionId, scope);
  return recoverStaleTurn(ports, context, sessionId, state);
}

// ---- a turn ----

export interface SendMessageInput {
  agentId: string;
  sessionId: string;
  scope: AgentScope;
  content: string;
  attachments: Array<{ name: string; mediaType: string; content: string }>;
}

export interface StartedTurn {
  messageId: string;
  /** Revision of AgentMessageReceived: the SSE id of `message.started`. */
  revision: number;
  position: number | null;
  /** Resolves when the turn ended (and AgentMessageCompleted is in the log). */
  done: Promise<LoopOutcome | null>;
  /** Receives the turn's session events from AgentMessageReceived (already sent ones first), until AgentMessageCompleted. */
  listen(listener: (e: TurnEvent) => void): () => void;
}

export async function sendAgentMessage(ports: AgentTurnPorts, context: CommandContext, input: SendMessageInput): Promise<StartedTurn> {
  const { state: agent } = await visibleAgent(ports.eventStore, input.agentId, input.scope);
  let { state: session } = await visibleSession(ports.eventStore, input.agentId, input.sessionId, input.scope);
  session = await recoverStaleTurn(ports, context, input.sessionId, session);
  if (session.running) throw new DomainError('SESSION_BUSY', `the session is answering message ${session.running}; wait for it or cancel it`, 'conflict', { messageId: session.running });

  const provider = await providerOf(ports, agent, input.scope);
  // An organization over its monthly LLM budget gets 402 BUDGET_EXCEEDED before the turn starts.
  const caller = { orgId: input.scope.orgId, userId: input.scope.userId };
  const budgetPorts = { eventStore: ports.eventStore, clock: { now: ports.now } };
  await assertWithinBudget(budgetPorts, caller, provider.id);
  const { tools, unavailable } = await resolveAgentTools(ports.tools, agent.tools, { context, scope: input.scope, agentId: input.agentId, sessionId: input.sessionId, memoryScope: agent.memory?.enabled ? agent.memory.scope : null });
  const skills = agent.skills.length > 0 && ports.skills ? await loopSkills(ports.skills, input.scope, agent.skills) : null;
  if (skills) tools.push(...skills.tools.filter((t) => !tools.some((x) => x.name === t.name)));
  const base = systemPrompt(agent, unavailable);
  const system = (skills ? skills.system(base || null) : base) ?? '';
  const budget = Math.max(0, ports.settings.AGENTS_CONTEXT_TOKENS - estimateTokens(system));
  const history = historyWithin(session, budget);

  const messageId = ports.newId();
  const stream = agentSessionStreamId(input.sessionId);
  const deadline = new Date(ports.now().getTime() + agent.limits.timeoutMs).toISOString();
  const received = await handleAtContextTime(ports.eventStore, context, stream, agentSessionDecider, {
    type: 'ReceiveMessage',
    messageId,
    content: input.content,
    attachments: input.attachments,
    runner: ports.runnerId,
    deadline,
    context: { budgetTokens: budget, estimatedTokens: history.estimatedTokens, includedMessageIds: history.includedMessageIds, droppedMessageIds: history.droppedMessageIds },
  });
  const receivedEvent = received.events[0];

  const turn: RunningTurn = { controller: new AbortController(), done: null as never, listeners: new Set(), sent: [] };
  const publish = (events: TurnEvent[]) => {
    for (const e of events) {
      turn.sent.push(e);
      for (const l of turn.listeners) l(e);
    }
  };
  publish([{ type: receivedEvent.type, data: receivedEvent.data, revision: received.revision }]);

  const recorder = new TurnRecorder(ports, context, input.sessionId, messageId, publish, turn.controller);
  const messages: LlmMessage[] = [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...history.messages,
    { role: 'user', content: userText({ content: input.content, attachments: input.attachments }) },
  ];
  // One span per turn (GenAI `invoke_agent`): the model calls and tool runs of the loop nest below it.
  const turnAttributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': input.agentId, 'gen_ai.agent.name': agent.name, 'gen_ai.conversation.id': input.sessionId, 'gen_ai.request.model': agent.model, [ATTR.sessionId]: input.sessionId, ...eventAttributes({ streamId: agentSessionStreamId(input.sessionId), revision: received.revision, position: received.position }) };
  turn.done = inSpan(`invoke_agent ${agent.name}`, { attributes: turnAttributes }, async (turnSpan) => {
    let outcome: LoopOutcome | null = null;
    try {
      outcome = await runAgentLoop({
        provider,
        model: agent.model,
        messages,
        tools,
        limits: { maxIterations: agent.limits.maxIterations, maxToolCalls: agent.limits.maxToolCalls, ...(agent.limits.maxTokens !== null && { maxTokens: agent.limits.maxTokens }), timeoutMs: agent.limits.timeoutMs },
        ...(agent.temperature !== null && { temperature: agent.temperature }),
        signal: turn.controller.signal,
        stream: true,
        onEvent: async (e) => {
          // Each paid step is spent against the organization's budget; the next step is refused once it is spent.
          if (e.type === 'model.completed' && e.cost > 0 && caller.orgId) {
            await recordLlmSpend(ports.eventStore, { ...context, now: ports.now() }, { orgId: caller.orgId, amountUsd: e.cost, spendId: `agent:${messageId}:${e.iteration}` });
          }
          return recorder.take(e);
        },
        withinBudget: () =>
          assertWithinBudget(budgetPorts, caller, provider.id).then(
            () => true,
            (err) => {
              if ((err as { code?: string }).code === 'BUDGET_EXCEEDED') return false;
              throw err;
            },
          ),
      });
      await recorder.flush();
      await complete(outcome.finishReason, outcome.text, outcome, outcome.error ?? null);
    } catch (err) {
      ports.logger.error({ err, sessionId: input.sessionId, messageId }, 'agent turn failed');
      await recorder.flush().catch(() => {});
      await complete('error', recorder.text, outcome, { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) }).catch((e) =>
        ports.logger.error({ err: e, messageId }, 'agent turn could not be completed; it will be recovered as interrupted'),
      );
    } finally {
      turn.listeners.clear();
    }
    if (outcome) turnSpan?.setAttributes({ 'gen_ai.usage.input_tokens': outcome.usage.promptTokens, 'gen_ai.usage.output_tokens': outcome.usage.completionTokens, 'gen_ai.response.finish_reasons': [outcome.finishReason] });
    return outcome;
  });
  // Known to this service until it ends (a cancel or a delete that lands here aborts it at once).
  ports.turns.track(messageId, turn);
  // A cancel that lands on another process is only in the log: follow it from here.
  if (!ports.singleProcess) void followCancel(ports, input.sessionId, messageId, turn);

  async function complete(finishReason: AgentFinishReason, text: string, outcome: LoopOutcome | null, error: { code: string; message: string } | null) {
    const result = await handleAtContextTime(ports.eventStore, { ...context, now: ports.now() }, stream, agentSessionDecider, {
      type: 'CompleteMessage',
      messageId,
      text,
      finishReason,
      iterations: outcome?.iterations ?? 0,
      toolCalls: outcome?.toolCalls ?? 0,
      usage: outcome?.usage ?? { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0 },
      cost: outcome?.cost ?? 0,
      error,
    });
    if (result.events.length > 0) publish([{ type: result.events[0].type, data: result.events[0].data, revision: result.revision }]);
  }

  return {
    messageId,
    revision: received.revision,
    position: received.position,
    done: turn.done,
    listen(listener) {
      for (const e of turn.sent) listener(e);
      turn.listeners.add(listener);
      return () => turn.listeners.delete(listener);
    },
  };
}

async function providerOf(ports: AgentTurnPorts, agent: AgentDefinition, scope: AgentScope) {
  if (!(LLM_PROVIDER_IDS as readonly string[]).includes(agent.provider)) throw new DomainError('UNKNOWN_PROVIDER', `unknown provider ${agent.provider}`, 'invalid', { field: 'provider' });
  return ports.llm.providerFor({ orgId: scope.orgId, userId: scope.userId }, agent.provider as LlmProviderId);
}

function systemPrompt(agent: AgentDefinition, unavailable: Array<{ ref: unknown; reason: string }>): string {
  const parts = [agent.instructions.trim()];
  if (unavailable.length > 0) parts.push(`Some of your tools are unavailable now: ${unavailable.map((u) => u.reason).join('; ')}.`);
  return parts.filter(Boolean).join('\n\n');
}

/**
 * Appends the loop's events to the session stream in order; text deltas that arrive while an
 * append is in flight are coalesced into one AgentTextDelta. Each appended event is published
 * (SSE) with its revision once it is in the log. A cancel request recorded by another process
 * is seen here (the folded state) and aborts the turn.
 */
class TurnRecorder {
  private queue: AgentTurnEvent[] = [];
  private pumping: Promise<void> | null = null;
  text = '';

  constructor(
    private readonly ports: AgentTurnPorts,
    private readonly context: CommandContext,
    private readonly sessionId: string,
    private readonly messageId: string,
    private readonly publish: (events: TurnEvent[]) => void,
    private readonly controller: AbortController,
  ) {}

  take(e: LoopEvent): Promise<void> | void {
    const at = this.ports.now().toISOString();
    const messageId = this.messageId;
    switch (e.type) {
      case 'text.delta': {
        this.text += e.text;
        const last = this.queue[this.queue.length - 1];
        if (last?.type === 'AgentTextDelta' && last.data.iteration === e.iteration) last.data.text += e.text;
        else this.queue.push({ type: 'AgentTextDelta', data: { messageId, iteration: e.iteration, text: e.text } });
        break;
      }
      case 'model.completed':
        this.queue.push({
          type: 'AgentStepCompleted',
          data: { messageId, iteration: e.iteration, text: e.text, toolCalls: e.toolCalls.map((c) => ({ id: c.id, name: c.name, input: c.input })), usage: e.usage, cost: e.cost, model: e.model, llmFinishReason: e.llmFinishReason, at },
        });
        break;
      case 'tool.called':
        this.queue.push({ type: 'AgentToolCalled', data: { messageId, iteration: e.iteration, toolCallId: e.call.id, name: e.call.name, input: e.call.input, at } });
        break;
      case 'tool.result': {
        const r = e.result;
        this.queue.push({ type: 'AgentToolResulted', data: { messageId, iteration: r.iteration, toolCallId: r.toolCallId, name: r.name, content: r.content, isError: r.isError, skipped: r.skipped ?? null, durationMs: Math.round(r.durationMs * 1000) / 1000, at } });
        break;
      }
      case 'tools.starting':
        // The step and its calls are in the log before any tool runs.
        return this.flush();
      default:
        return;
    }
    // Deltas go out as soon as they are appended; the step and its calls wait for tools.starting.
    if (e.type === 'text.delta' || e.type === 'tool.result') this.pump();
  }

  private pump() {
    if (this.pumping) return;
    this.pumping = (async () => {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const result = await handleAtContextTime(this.ports.eventStore, { ...this.context, now: this.ports.now() }, agentSessionStreamId(this.sessionId), agentSessionDecider, {
          type: 'RecordTurn',
          messageId: this.messageId,
          events: batch,
        });
        const first = result.revision - result.events.length + 1;
        this.publish(result.events.map((event, i) => ({ type: event.type, data: event.data, revision: first + i })));
        const m = result.state.messages.find((x) => x.messageId === this.messageId);
        if (result.events.length === 0 || m?.cancelRequested) this.controller.abort(new Error('cancelled'));
      }
    })()
      .catch((err) => {
        // The session was deleted or the log refused: the turn stops (it is completed by its runner).
        this.ports.logger.warn({ err, sessionId: this.sessionId, messageId: this.messageId }, 'agent turn events could not be recorded; stopping the turn');
        this.queue = [];
        this.controller.abort(new Error('cancelled'));
      })
      .finally(() => {
        this.pumping = null;
      });
  }

  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
    if (this.queue.length > 0) {
      this.pump();
      await this.flush();
    }
  }
}

/** The longest a cancel recorded by another process waits before the running process looks (issue 36: within 1 s). */
export const CANCEL_CHECK_MS = 250;

/**
 * While the turn runs, reads its session when the session gets an event (or every CANCEL_CHECK_MS)
 * and aborts the turn, its model call and tools in flight, once AgentMessageCancelRequested is
 * there. Without it the turn would see the cancel only at its next append, which a long tool call
 * holds back. The reads go through the handler's cache: only the new events are read.
 */
async function followCancel(ports: AgentTurnPorts, sessionId: string, messageId: string, turn: RunningTurn): Promise<void> {
  let watch: AppendWatch | null = null;
  try {
    watch = ports.streamSignals?.watch(agentSessionStreamId(sessionId)) ?? null;
  } catch {
    watch = null; // the process's bound of waiters is reached: look every CANCEL_CHECK_MS instead
  }
  let ended = false;
  void turn.done.finally(() => (ended = true));
  const signal = turn.controller.signal;
  try {
    while (!ended && !signal.aborted) {
      if (watch) await watch.next(CANCEL_CHECK_MS, signal);
      else await sleep(CANCEL_CHECK_MS, signal);
      if (ended || signal.aborted) break;
      const { state } = await loadAgentSession(ports.eventStore, sessionId);
      const message = state.messages.find((m) => m.messageId === messageId);
      if (!message || message.cancelRequested || message.completed || state.deleted) {
        if (!message?.completed) turn.controller.abort(new Error('cancelled'));
        break;
      }
    }
  } catch (err) {
    ports.logger.warn({ err, sessionId, messageId }, 'following cancels of an agent turn failed; a cancel from another process now waits for its next append');
  } finally {
    watch?.close();
  }
}

/**
 * Asks the turn to stop: recorded as AgentMessageCancelRequested, and the turn is aborted at once
 * when this process runs it (the model call and every tool in flight; no tool starts after).
 * Waits (at most `waitMs`) for the turn to end; answers the message as it stands.
 */
export async function cancelAgentMessage(ports: AgentTurnPorts, context: CommandContext, agentId: string, sessionId: string, messageId: string, scope: AgentScope, waitMs = 2_000) {
  const state = await readAgentSession(ports, context, agentId, sessionId, scope);
  const message = state.messages.find((m) => m.messageId === messageId);
  if (!message) throw messageNotFound();
  const turn = ports.turns.get(messageId);
  turn?.controller.abort(new Error('cancelled'));
  if (!message.completed) {
    await handleAtContextTime(ports.eventStore, context, agentSessionStreamId(sessionId), agentSessionDecider, { type: 'RequestCancel', messageId, by: scope.userId });
  }
  if (turn) await Promise.race([turn.done, new Promise((r) => setTimeout(r, waitMs))]);
  const after = (await loadAgentSession(ports.eventStore, sessionId)).state;
  return after.messages.find((m) => m.messageId === messageId)!;
}

/** Deleting a session stops its running turn first. */
export async function deleteAgentSession(ports: AgentTurnPorts, context: CommandContext, agentId: string, sessionId: string, scope: AgentScope) {
  const { state } = await visibleSession(ports.eventStore, agentId, sessionId, scope);
  if (state.running) {
    const turn = ports.turns.get(state.running);
    turn?.controller.abort(new Error('cancelled'));
    if (turn) await Promise.race([turn.done, new Promise((r) => setTimeout(r, 2_000))]);
  }
  return handleAtContextTime(ports.eventStore, context, agentSessionStreamId(sessionId), agentSessionDecider, { type: 'DeleteSession' });
}

export type { AgentTool };
