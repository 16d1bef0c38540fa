import {
  conversationDecider,
  conversationStreamId,
  type AssistantCommand,
  type ConversationMessage,
  type ConversationScope,
  type ConversationState,
  type LlmUsageSummary,
} from '../domain/assistant/index.js';
import type { AssistantReads } from '../ports/assistant.js';
import type { EventStore } from '../ports/event-store.js';
import type { DefaultModel, LlmCaller, LlmGateway, LlmMessage, LlmProviderId } from '../ports/llm.js';
import type { LocalWork } from '../ports/local-work.js';
import type { Logger } from '../ports/logger.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import type { SkillsReadModel } from '../ports/skills.js';
import type { StreamSignals } from '../ports/stream-signals.js';
import { runAgentLoop, type AgentTool, type LoopEvent, type LoopOutcome } from './agents-loop.js';
import { assistantTools } from './assistant-tools.js';
import { DeltaRecorder } from './assistant-deltas.js';
import { loopSkills } from './skills-tools.js';
import { handleAtContextTime, loadState, type CommandContext, type HandleResult, type WithoutAt } from './handle.js';

/**
 * The assistant: an agent the service provides, run by the tool-calling loop of
 * commands/agents-loop.ts with its own tools (commands/assistant-tools.ts) and the active skills
 * of the user's workspace (names and descriptions in the system prompt, `load_skill` for the
 * content). A conversation (`assistantconv-<id>`) holds one generation at a time: the user's
 * message and the reply it starts are one event (UserMessageSent); tool calls and results are
 * recorded as they happen; the reply ends with GenerationCompleted or GenerationCancelled (the
 * partial answer kept). A streamed reply's text deltas are logged too (coalesced), so its stream
 * can be resumed from the log; a JSON reply logs only its final text.
 */
export interface AssistantPorts {
  eventStore: EventStore;
  llm: LlmGateway;
  reads: AssistantReads;
  skills: SkillsReadModel;
  sealer: Pick<SecretSealer, 'seal'>;
  streamSignals: StreamSignals;
  logger: Logger;
  now(): Date;
  /** Replies generating in this service, by reply id: a cancel that lands here aborts at once (one registry per service, from the container). */
  replies: LocalWork<ReplyRecorded>;
  settings: AssistantModelSettings & {
    ASSISTANT_MAX_ITERATIONS: number;
    ASSISTANT_MAX_TOOL_CALLS: number;
    ASSISTANT_TIMEOUT_MS: number;
    ASSISTANT_CANCEL_WAIT_MS: number;
    ASSISTANT_HISTORY_MESSAGES: number;
  };
}

/**
 * The assistant's model for one reply: ASSISTANT_PROVIDER (with ASSISTANT_MODEL, else that
 * provider's default model) when the service names one, else the rule every context shares (the
 * first provider the caller's credentials cover, offline only when none is). Resolved when the
 * message is sent and recorded with it, so the reply and its record name the same model.
 */
export interface AssistantModelSettings {
  ASSISTANT_PROVIDER?: LlmProviderId;
  ASSISTANT_MODEL?: string;
}

export async function assistantModel(llm: Pick<LlmGateway, 'defaultModel' | 'defaultModelOf'>, caller: LlmCaller, settings: AssistantModelSettings): Promise<DefaultModel> {
  const named = settings.ASSISTANT_PROVIDER;
  if (!named) return llm.defaultModel(caller);
  const model = settings.ASSISTANT_MODEL ?? llm.defaultModelOf(named);
  // The configuration check refuses a provider without a default model unless ASSISTANT_MODEL is set.
  if (!model) throw new Error(`ASSISTANT_PROVIDER=${named} has no default model: set ASSISTANT_MODEL`);
  return { provider: named, model };
}

export const ASSISTANT_INSTRUCTIONS = [
  'You are the assistant of a flow automation service. You help the user build, run and fix flows of nodes (LLM nodes, webhooks, transforms, conditions, MCP tools, memory).',
  'Use your tools to read the user\'s flows, runs and node types instead of guessing; explain failed runs with explain_run.',
  'When you create or change a flow, use the flow tools: every change is validated like the editor\'s and recorded as made by the assistant. Say what you changed.',
].join('\n');

function command(store: EventStore, context: CommandContext, conversationId: string, cmd: WithoutAt<AssistantCommand>) {
  return handleAtContextTime(store, context, conversationStreamId(conversationId), conversationDecider, cmd);
}

export const createConversation = (store: EventStore, context: CommandContext, scope: ConversationScope, conversationId: string, title: string) =>
  command(store, context, conversationId, { type: 'CreateConversation', conversationId, userId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, title });
export const renameConversation = (store: EventStore, context: CommandContext, scope: ConversationScope, conversationId: string, title: string) =>
  command(store, context, conversationId, { type: 'RenameConversation', scope, title });
/** Deletes the conversation; a reply running in this service is stopped (its tools get their abort). */
export async function deleteConversation(ports: Pick<AssistantPorts, 'eventStore' | 'replies'>, context: CommandContext, scope: ConversationScope, conversationId: string) {
  const store = ports.eventStore;
  const { state } = await loadConversation(store, conversationId);
  const result = await command(store, context, conversationId, { type: 'DeleteConversation', scope });
  if (state.running) ports.replies.get(state.running)?.controller.abort(new Error('the conversation was deleted'));
  return result;
}
export const giveFeedback = (store: EventStore, context: CommandContext, scope: ConversationScope, conversationId: string, messageId: string, rating: 'like' | 'dislike' | null, comment: string | null) =>
  command(store, context, conversationId, { type: 'GiveFeedback', scope, messageId, rating, comment });

export function loadConversation(store: EventStore, conversationId: string) {
  return loadState<ConversationState>(store, conversationStreamId(conversationId), conversationDecider);
}

// ---- generations ----

/** The history the model sees: the newest `limit` finished messages (user and assistant text), oldest first. */
export function historyMessages(state: ConversationState, limit: number): { messages: LlmMessage[]; dropped: number } {
  const done = state.messages.filter((m) => m.role === 'user' || (m.status !== 'running' && m.content !== ''));
  const kept = limit === 0 ? [] : done.slice(-limit);
  return { messages: kept.map((m: ConversationMessage) => ({ role: m.role, content: m.content })), dropped: done.length - kept.length };
}

const usageSummary = (o: LoopOutcome): LlmUsageSummary => ({ promptTokens: o.usage.promptTokens, completionTokens: o.usage.completionTokens, totalTokens: o.usage.totalTokens });

/** The conversation after the reply was recorded, and the position of that record (read-your-writes). */
export interface ReplyRecorded {
  state: ConversationState;
  position: number | null;
}

export interface SendResult {
  messageId: string;
  replyId: string;
  sent: HandleResult<ConversationState, unknown>;
  /** Resolves with the conversation once the reply is recorded (completed, failed or cancelled). */
  done: Promise<ReplyRecorded>;
}

/** What a reply is generated from, and who hears of it as it goes (the loop's events, the flows its tools changed). */
interface ReplyInput {
  replyId: string;
  content: string;
  stream: boolean;
  onEvent?(event: LoopEvent): void | Promise<void>;
  onFlowChanged?(flowId: string, position: number | null): void;
}

/**
 * Records the user's message (409 CONVERSATION_BUSY while a reply runs) and starts the reply in
 * this process. `onEvent` gets the loop's events (deltas, tool calls and results) as they happen;
 * the reply goes on when the client leaves (cancel is explicit).
 */
export async function sendMessage(
  ports: AssistantPorts,
  context: CommandContext,
  scope: ConversationScope,
  conversationId: string,
  input: ReplyInput & { messageId: string },
): Promise<SendResult> {
  const chosen = await assistantModel(ports.llm, { orgId: scope.orgId, userId: scope.userId }, ports.settings);
  const sent = await command(ports.eventStore, context, conversationId, { type: 'SendMessage', scope, messageId: input.messageId, replyId: input.replyId, content: input.content, ...chosen });
  const controller = new AbortController();
  const done = generate(ports, context, scope, conversationId, sent.state, { ...input, model: chosen }, controller);
  ports.replies.track(input.replyId, { controller, done });
  return { messageId: input.messageId, replyId: input.replyId, sent, done };
}

async function generate(
  ports: AssistantPorts,
  context: CommandContext,
  scope: ConversationScope,
  conversationId: string,
  state: ConversationState,
  input: ReplyInput & { model: DefaultModel },
  controller: AbortController,
): Promise<ReplyRecorded> {
  const { replyId } = input;
  const settings = ports.settings;
  const record = (cmd: WithoutAt<AssistantCommand>) => command(ports.eventStore, { ...context, causationId: replyId, now: ports.now() }, conversationId, cmd);
  const stopWatching = watchForCancel(ports, conversationId, replyId, controller);
  // A streamed reply's text is logged as it goes, so its stream can be resumed; a JSON reply's is not (only the final text).
  const deltas = input.stream ? new DeltaRecorder(replyId, record) : null;
  try {
    const skills = await loopSkills(ports.skills, scope);
    const tools: AgentTool[] = [...assistantTools({ eventStore: ports.eventStore, reads: ports.reads, sealer: ports.sealer, now: ports.now }, { scope, command: context, replyId, onFlowChanged: input.onFlowChanged }), ...skills.tools];
    // The history before this turn: the state holds the new user message and the running reply last.
    const before = { ...state, messages: state.messages.slice(0, -2) };
    const { messages: history, dropped } = historyMessages(before, settings.ASSISTANT_HISTORY_MESSAGES);
    const system = skills.system(`${ASSISTANT_INSTRUCTIONS}${dropped > 0 ? `\n(${dropped} earlier messages of this conversation are not shown.)` : ''}`)!;
    const provider = await ports.llm.providerFor({ orgId: scope.orgId, userId: scope.userId }, input.model.provider);
    const outcome = await runAgentLoop({
      provider,
      model: input.model.model,
      messages: [{ role: 'system', content: system }, ...history, { role: 'user', content: input.content }],
      tools,
      limits: { maxIterations: settings.ASSISTANT_MAX_ITERATIONS, maxToolCalls: settings.ASSISTANT_MAX_TOOL_CALLS, timeoutMs: settings.ASSISTANT_TIMEOUT_MS },
      signal: controller.signal,
      stream: input.stream,
      async onEvent(event) {
        if (event.type === 'text.delta') deltas?.take(event.iteration, event.text);
        else if (event.type === 'tool.called' || event.type === 'tool.result') await deltas?.flush();
        if (event.type === 'tool.called') {
          await record({ type: 'RecordToolCall', replyId, toolCallId: event.call.id, name: event.call.name, input: event.call.input, iteration: event.iteration });
        } else if (event.type === 'tool.result') {
          const r = event.result;
          await record({ type: 'RecordToolResult', replyId, toolCallId: r.toolCallId, name: r.name, content: r.content, isError: r.isError, iteration: event.iteration });
        }
        // The client's listener must not break the reply: its failures are its own.
        await Promise.resolve(input.onEvent?.(event)).catch(() => undefined);
      },
    });
    await deltas?.flush();
    const result =
      outcome.finishReason === 'cancelled'
        ? await record({ type: 'CancelGeneration', replyId, content: outcome.text, usage: usageSummary(outcome), cost: outcome.cost })
        : await record({
            type: 'CompleteGeneration', replyId, content: outcome.text, finishReason: outcome.finishReason, iterations: outcome.iterations, toolCalls: outcome.toolCalls,
            usage: usageSummary(outcome), cost: outcome.cost, error: outcome.error ?? null,
          });
    return { state: result.state, position: result.position };
  } catch (err) {
    // A failure before or outside the loop (no credentials, a store error): the reply ends failed.
    const e = err as { code?: unknown; message?: unknown };
    const error = { code: typeof e?.code === 'string' ? e.code : 'ASSISTANT_FAILED', message: err instanceof Error ? err.message : String(err) };
    ports.logger.warn({ err, conversationId, replyId }, 'assistant reply failed');
    await deltas?.flush().catch(() => undefined);
    const zero = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const result = await record({ type: 'CompleteGeneration', replyId, content: '', finishReason: 'error', iterations: 0, toolCalls: 0, usage: zero, cost: 0, error });
    input.onEvent && (await Promise.resolve(input.onEvent({ type: 'finished', outcome: { text: '', finishReason: 'error', iterations: 0, toolCalls: 0, usage: { ...zero, cachedTokens: 0, cacheWriteTokens: 0 }, cost: 0, messages: [], modelMs: 0, error } })).catch(() => undefined));
    return { state: result.state, position: result.position };
  } finally {
    stopWatching();
  }
}

/** Aborts the reply when another process records a cancel request for it (GenerationCancelRequested). */
function watchForCancel(ports: AssistantPorts, conversationId: string, replyId: string, controller: AbortController): () => void {
  const stop = new AbortController();
  let watch: ReturnType<StreamSignals['watch']> | null = null;
  try {
    watch = ports.streamSignals.watch(conversationStreamId(conversationId));
  } catch {
    watch = null; // too many waiters: fall back to reading the stream every second
  }
  void (async () => {
    let from = -1;
    while (!stop.signal.aborted && !controller.signal.aborted) {
      if (watch) await watch.next(1_000, stop.signal);
      else await new Promise((r) => setTimeout(r, 1_000));
      if (stop.signal.aborted) break;
      const events = await ports.eventStore.readStream(conversationStreamId(conversationId), { fromRevision: from + 1 }).catch(() => []);
      for (const e of events) {
        from = e.revision;
        if (e.type === 'GenerationCancelRequested' && (e.data as { replyId?: string }).replyId === replyId) controller.abort(new Error('cancelled'));
      }
    }
  })();
  return () => {
    stop.abort();
    watch?.close();
  };
}

export interface CancelResult {
  /** False when no reply was running (nothing to cancel). */
  cancelled: boolean;
  replyId: string | null;
  state: ConversationState;
  position: number | null;
}

/**
 * Stops the running reply: the model call and every tool in flight are aborted (at once when this
 * process runs it; through a GenerationCancelRequested event another process watches otherwise),
 * the partial answer is kept and GenerationCancelled recorded. When no process records it within
 * ASSISTANT_CANCEL_WAIT_MS (the one running it is gone), the cancel records it itself with the
 * reply's text as the log has it.
 */
export async function cancelGeneration(ports: AssistantPorts, context: CommandContext, scope: ConversationScope, conversationId: string): Promise<CancelResult> {
  const requested = await command(ports.eventStore, context, conversationId, { type: 'RequestCancel', scope });
  const replyId = requested.state.running;
  if (!replyId) return { cancelled: false, replyId: null, state: requested.state, position: requested.position };
  const local = ports.replies.get(replyId);
  if (local) {
    local.controller.abort(new Error('cancelled'));
    return { cancelled: true, replyId, ...(await local.done) };
  }
  const deadline = Date.now() + ports.settings.ASSISTANT_CANCEL_WAIT_MS;
  let watch: ReturnType<StreamSignals['watch']> | null = null;
  try {
    watch = ports.streamSignals.watch(conversationStreamId(conversationId));
  } catch {
    watch = null;
  }
  try {
    for (;;) {
      const { state, revision } = await loadConversation(ports.eventStore, conversationId);
      if (state.running !== replyId) {
        const [last] = await ports.eventStore.readStream(conversationStreamId(conversationId), { fromRevision: revision, maxCount: 1 });
        return { cancelled: true, replyId, state, position: last?.position ?? null };
      }
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (watch) await watch.next(Math.min(left, 200));
      else await new Promise((r) => setTimeout(r, Math.min(left, 100)));
    }
  } finally {
    watch?.close();
  }
  const { state } = await loadConversation(ports.eventStore, conversationId);
  const partial = state.messages.find((m) => m.id === replyId)?.content ?? '';
  const zero = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const result = await command(ports.eventStore, { ...context, now: ports.now() }, conversationId, { type: 'CancelGeneration', replyId, content: partial, usage: zero, cost: 0 });
  return { cancelled: true, replyId, state: result.state, position: result.position };
}

