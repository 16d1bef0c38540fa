import { isLlmAbort, type LlmMessage, type LlmProvider, type LlmToolCall, type LlmToolResult, type LlmUsage } from '../ports/llm.js';
import { inSpan } from '../lib/tracing.js';

/**
 * The tool-calling loop: model → tool calls (run concurrently) → model … until the model answers
 * without calling a tool, a limit is reached, the caller cancels, or the model call fails.
 * Used by agents (commands/agents-messages.ts) and by the assistant with its own tools.
 *
 * - Tools are objects `{name, description, inputSchema, run(input, signal)}`; `run` resolves with
 *   a string (or any JSON value, serialised) and rejects to report an error to the model.
 *   Arguments that are not a JSON object, miss a required property or name an unknown tool are
 *   answered with an error result without running anything (the model can correct itself).
 * - Limits (`LOOP_LIMITS` for the bounds): `maxIterations` model calls (default 8, 1–50),
 *   `maxToolCalls` tool runs in the turn, `maxTokens` tokens generated in the turn (passed on to
 *   each call as what is left), `timeoutMs` for the whole turn, `budget` US dollars of model cost.
 *   A limit ends the turn with its `finishReason` and the text produced so far; no further model
 *   call is made. Calls beyond `maxToolCalls` are not run (their results say so).
 * - Cancel: aborting `signal` aborts the model call in flight and the signal of every tool in
 *   flight, starts no new tool, and resolves at once (tools that ignore their signal are left
 *   behind: their late results are dropped) with `finishReason: 'cancelled'` and the partial
 *   text (streamed deltas included).
 * - Output: `onEvent` receives the loop's events in order (text deltas only with `stream`); the
 *   promise resolves with the outcome. It rejects only when `onEvent` throws.
 */

export interface AgentTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object, as the model sees it. */
  inputSchema: Record<string, unknown>;
  run(input: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

export interface LoopLimits {
  maxIterations?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  timeoutMs?: number;
  /** US dollars of model cost for the turn. */
  budget?: number;
  /** Tool calls of one step run at most this many at a time (default 8). */
  maxConcurrentTools?: number;
}

export const LOOP_LIMITS = {
  maxIterations: { min: 1, max: 50, default: 8 },
  maxToolCalls: { min: 0, max: 200, default: 32 },
  maxTokens: { min: 1, max: 1_000_000 },
  timeoutMs: { min: 100, max: 3_600_000, default: 300_000 },
  /** A tool result longer than this is cut (and says so) before it reaches the model and the log. */
  toolResultChars: 20_000,
} as const;

export type LoopFinishReason =
  | 'stop'
  | 'length'
  | 'content_filter'
  | 'max_iterations'
  | 'max_tool_calls'
  | 'max_tokens'
  | 'timeout'
  | 'budget'
  | 'cancelled'
  | 'error';

export interface LoopToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  iteration: number;
}

export interface LoopToolResult {
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  /** Not run: cancelled, over the limit, unknown tool, bad arguments. */
  skipped?: 'cancelled' | 'max_tool_calls' | 'unknown_tool' | 'invalid_arguments' | 'timeout';
  durationMs: number;
  iteration: number;
}

export type LoopEvent =
  | { type: 'iteration.started'; iteration: number }
  | { type: 'text.delta'; iteration: number; text: string }
  | { type: 'model.completed'; iteration: number; text: string; toolCalls: LoopToolCall[]; usage: LlmUsage; cost: number; model: string; modelMs: number; llmFinishReason: string }
  | { type: 'tool.called'; iteration: number; call: LoopToolCall }
  /** After the step's tool.called events, before any of its tools runs (a recorder flushes here). */
  | { type: 'tools.starting'; iteration: number; count: number }
  | { type: 'tool.result'; iteration: number; result: LoopToolResult }
  | { type: 'finished'; outcome: LoopOutcome };

export interface LoopOutcome {
  /** Every step's text, joined by a blank line (exactly what the deltas streamed). */
  text: string;
  finishReason: LoopFinishReason;
  iterations: number;
  toolCalls: number;
  usage: LlmUsage;
  cost: number;
  /** The turn as messages to append to the history (assistant steps with their calls, tool results). */
  messages: LlmMessage[];
  /** Set with finishReason 'error': what failed. */
  error?: { code: string; message: string };
  /** Time spent in model calls (ms), to tell the service's own overhead apart. */
  modelMs: number;
}

export interface LoopInput {
  provider: LlmProvider;
  model: string;
  /** The history with the turn's user message last (system messages included). */
  messages: LlmMessage[];
  tools: AgentTool[];
  limits?: LoopLimits;
  temperature?: number;
  signal?: AbortSignal;
  /** Stream text deltas from the model (`text.delta` events). */
  stream?: boolean;
  onEvent?(event: LoopEvent): void | Promise<void>;
  /** Asked before every model call after the first: false ends the turn with finishReason 'budget' (e.g. an organization's monthly LLM budget). */
  withinBudget?(): Promise<boolean>;
}

const zeroUsage = (): LlmUsage => ({ promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 0 });

function addUsage(a: LlmUsage, b: LlmUsage): LlmUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** The limits with defaults applied and bounds enforced (values out of bounds are clamped). */
export function effectiveLimits(limits: LoopLimits = {}): Required<Omit<LoopLimits, 'maxTokens' | 'budget'>> & Pick<LoopLimits, 'maxTokens' | 'budget'> {
  const clamp = (v: number | undefined, b: { min: number; max: number; default: number }) => Math.min(b.max, Math.max(b.min, Math.floor(v ?? b.default)));
  return {
    maxIterations: clamp(limits.maxIterations, LOOP_LIMITS.maxIterations),
    maxToolCalls: clamp(limits.maxToolCalls, LOOP_LIMITS.maxToolCalls),
    timeoutMs: clamp(limits.timeoutMs, LOOP_LIMITS.timeoutMs),
    maxConcurrentTools: Math.max(1, Math.floor(limits.maxConcurrentTools ?? 8)),
    ...(limits.maxTokens !== undefined && { maxTokens: limits.maxTokens }),
    ...(limits.budget !== undefined && { budget: limits.budget }),
  };
}

/** Why arguments do not fit the schema (object, required properties, top-level types), or null. */
export function argumentProblem(schema: Record<string, unknown>, input: Record<string, unknown>): string | null {
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === 'string') : [];
  const missing = required.filter((name) => input[name] === undefined);
  if (missing.length > 0) return `missing required argument(s): ${missing.join(', ')}`;
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const [name, value] of Object.entries(input)) {
    const type = properties[name]?.type;
    if (typeof type !== 'string') continue;
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = type === actual || (type === 'integer' && typeof value === 'number' && Number.isInteger(value)) || (type === 'number' && actual === 'number');
    if (!ok) return `argument ${name} must be of type ${type}`;
  }
  return null;
}

function resultText(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
  if (text.length <= LOOP_LIMITS.toolResultChars) return text;
  return `${text.slice(0, LOOP_LIMITS.toolResultChars)}\n[cut: the result had ${text.length} characters]`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

type Stop = 'cancelled' | 'timeout';

export async function runAgentLoop(input: LoopInput): Promise<LoopOutcome> {
  const limits = effectiveLimits(input.limits);
  const tools = new Map(input.tools.map((t) => [t.name, t]));
  const llmTools = input.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  const history = [...input.messages];
  const turn: LlmMessage[] = [];
  // Events reach `onEvent` one at a time, in order, even from concurrent tools.
  let emitted: Promise<void> = Promise.resolve();
  const emit = (event: LoopEvent): Promise<void> => {
    emitted = emitted.then(() => input.onEvent?.(event));
    return emitted;
  };

  // One controller for the turn: the caller's cancel and the timeout both abort it.
  const controller = new AbortController();
  let stopped: Stop | null = null;
  const stop = (why: Stop) => {
    if (stopped) return;
    stopped = why;
    controller.abort(new Error(why === 'timeout' ? 'the turn timed out' : 'cancelled'));
  };
  const onCancel = () => stop('cancelled');
  if (input.signal?.aborted) stopped = 'cancelled';
  input.signal?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
  const stoppedNow = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));

  let text = '';
  let usage = zeroUsage();
  let cost = 0;
  let iterations = 0;
  let toolCallCount = 0;
  let modelMs = 0;
  let finishReason: LoopFinishReason | null = null;
  let error: LoopOutcome['error'];

  const appendText = async (iteration: number, piece: string, streamed: boolean) => {
    if (piece === '') return;
    const separator = text !== '' && !textOpen ? '\n\n' : '';
    textOpen = true;
    text += separator + piece;
    if (streamed) await emit({ type: 'text.delta', iteration, text: separator + piece });
  };
  let textOpen = false;

  try {
    while (finishReason === null) {
      if (stopped) {
        finishReason = stopped;
        break;
      }
      if (iterations >= limits.maxIterations) {
        finishReason = 'max_iterations';
        break;
      }
      if ((limits.budget !== undefined && cost >= limits.budget) || (iterations > 0 && input.withinBudget && !(await input.withinBudget()))) {
        finishReason = 'budget';
        break;
      }
      const tokensLeft = limits.maxTokens === undefined ? undefined : limits.maxTokens - usage.completionTokens;
      if (tokensLeft !== undefined && tokensLeft <= 0) {
        finishReason = 'max_tokens';
        break;
      }
      iterations++;
      const iteration = iterations;
      textOpen = false;
      await emit({ type: 'iteration.started', iteration });

      // Deltas are delivered in order even when `onEvent` is async (a chain of promises).
      let deltas: Promise<void> = Promise.resolve();
      let streamedText = '';
      const started = performance.now();
      let result;
      try {
        result = await input.provider.complete({
          model: input.model,
          messages: [...history, ...turn],
          ...(llmTools.length > 0 && { tools: llmTools, toolChoice: { type: 'auto' as const } }),
          ...(input.temperature !== undefined && { temperature: input.temperature }),
          ...(tokensLeft !== undefined && { maxTokens: tokensLeft }),
          signal: controller.signal,
          ...(input.stream && {
            stream: true,
            onDelta: (piece: string) => {
              streamedText += piece;
              deltas = deltas.then(() => appendText(iteration, piece, true));
            },
          }),
        });
      } catch (err) {
        modelMs += performance.now() - started;
        await deltas;
        if (stopped || isLlmAbort(err)) {
          finishReason = stopped ?? 'cancelled';
          break;
        }
        finishReason = 'error';
        const e = err as { code?: unknown; message?: unknown };
        error = { code: typeof e?.code === 'string' ? e.code : 'PROVIDER_ERROR', message: errorText(err) };
        break;
      }
      modelMs += performance.now() - started;
      await deltas;
      // A provider that did not stream (or streamed less) still gives the whole text.
      if (result.text.length > streamedText.length && result.text.startsWith(streamedText)) await appendText(iteration, result.text.slice(streamedText.length), !!input.stream);
      else if (!input.stream) await appendText(iteration, result.text, false);
      usage = addUsage(usage, result.usage);
      cost += result.cost;

      const calls: LlmToolCall[] = result.toolCalls ?? [];
      const loopCalls = calls.map((c) => ({ id: c.id, name: c.name, input: c.input, iteration }));
      await emit({ type: 'model.completed', iteration, text: result.text, toolCalls: loopCalls, usage: result.usage, cost: result.cost, model: result.model, modelMs: performance.now() - started, llmFinishReason: result.finishReason });
      turn.push({ role: 'assistant', content: result.text, ...(calls.length > 0 && { toolCalls: calls }) });

      if (calls.length === 0) {
        finishReason = result.finishReason === 'length' ? 'length' : result.finishReason === 'content_filter' ? 'content_filter' : 'stop';
        break;
      }

      // Tool calls: those within maxToolCalls run (concurrently), the rest are answered as skipped.
      const results = await runTools(calls, iteration);
      turn.push({ role: 'user', content: '', toolResults: results.map((r) => ({ toolCallId: r.toolCallId, name: r.name, content: r.content, ...(r.isError && { isError: true }) }) satisfies LlmToolResult) });
      if (stopped) {
        finishReason = stopped;
        break;
      }
      if (results.some((r) => r.skipped === 'max_tool_calls')) {
        finishReason = 'max_tool_calls';
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onCancel);
  }

  const outcome: LoopOutcome = { text, finishReason: finishReason ?? 'stop', iterations, toolCalls: toolCallCount, usage, cost, messages: turn, modelMs, ...(error && { error }) };
  await emit({ type: 'finished', outcome });
  return outcome;

  async function runTools(calls: LlmToolCall[], iteration: number): Promise<LoopToolResult[]> {
    const results: LoopToolResult[] = new Array(calls.length);
    const pending: Array<{ index: number; call: LlmToolCall; tool: AgentTool }> = [];
    const skippedNow: LoopToolResult[] = [];
    for (const [index, call] of calls.entries()) {
      const skip = (skipped: LoopToolResult['skipped'], content: string) => {
        results[index] = { toolCallId: call.id, name: call.name, content, isError: true, skipped, durationMs: 0, iteration };
        skippedNow.push(results[index]);
      };
      const tool = tools.get(call.name);
      await emit({ type: 'tool.called', iteration, call: { id: call.id, name: call.name, input: call.input, iteration } });
      if (call.invalidArguments !== undefined) skip('invalid_arguments', `the arguments are not a JSON object: ${call.invalidArguments.slice(0, 200)}`);
      else if (!tool) skip('unknown_tool', `no tool named ${call.name}`);
      else {
        const problem = argumentProblem(tool.inputSchema, call.input);
        if (problem) skip('invalid_arguments', problem);
        else if (toolCallCount >= limits.maxToolCalls) skip('max_tool_calls', `not run: the turn reached its limit of ${limits.maxToolCalls} tool calls`);
        else {
          toolCallCount++;
          pending.push({ index, call, tool });
        }
      }
    }
    await emit({ type: 'tools.starting', iteration, count: pending.length });
    for (const result of skippedNow) await emit({ type: 'tool.result', iteration, result });
    // Runs `pending` with at most maxConcurrentTools at once; none starts once the turn is stopped.
    let next = 0;
    const worker = async () => {
      while (next < pending.length) {
        const { index, call, tool } = pending[next++];
        if (stopped) {
          results[index] = { toolCallId: call.id, name: call.name, content: `not run: ${stopped}`, isError: true, skipped: stopped, durationMs: 0, iteration };
          await emit({ type: 'tool.result', iteration, result: results[index] });
          continue;
        }
        const started = performance.now();
        const toolAttributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id };
        const running = inSpan(`execute_tool ${call.name}`, { attributes: toolAttributes }, () => tool.run(call.input, controller.signal)).then(
          (value) => ({ content: resultText(value), isError: false }),
          (err) => ({ content: resultText(errorText(err)), isError: true }),
        );
        const settled = await Promise.race([running, stoppedNow.then(() => null)]);
        const durationMs = performance.now() - started;
        if (settled === null || stopped) {
          running.catch(() => {});
          results[index] = { toolCallId: call.id, name: call.name, content: `stopped: ${stopped ?? 'cancelled'}`, isError: true, skipped: stopped ?? 'cancelled', durationMs, iteration };
        } else results[index] = { toolCallId: call.id, name: call.name, content: settled.content, isError: settled.isError, durationMs, iteration };
        await emit({ type: 'tool.result', iteration, result: results[index] });
      }
    };
    await Promise.all(Array.from({ length: Math.min(limits.maxConcurrentTools, pending.length) }, worker));
    return results;
  }
}
