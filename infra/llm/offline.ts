import type { LlmProvider, LlmRequest, LlmResult, LlmTool, LlmToolCall } from '../../ports/llm.js';
import { sleep } from '../../lib/sleep.js';
import { refuseMedia } from './content.js';
import { LlmAbortError } from './errors.js';

/**
 * The offline provider (`llm: "offline"`, any model name): deterministic and without network,
 * for tests, demos and dry runs. Its output is the rendered prompt — the last user message —
 * unchanged; tokens are whitespace-separated words (prompt + output); it costs nothing.
 * Its results say `provider: "offline"`, so no one mistakes them for a model's answer.
 *
 * With tools: when the last user message carries no tool results and tools are offered, it calls
 * one (`toolChoice` `tool` names it, `any` takes the first, `auto` the first whose name appears in
 * the prompt; `none` or no match: plain text), with every string property of the tool's schema
 * set to the prompt. Its call ids are `toolu_offline_<messages>_<n>`. When the last user message
 * carries tool results, its output is their contents (one per line) followed by the message's
 * text. `stopSequences` cut the output before the first one found (`stopSequence` names it).
 *
 * Scripted tool calls (for agents' tests and demos): lines of the turn's prompt — the last user
 * message with text and no tool results — of the form
 * - `call <tool> <json arguments>`: the model calls that tool with those arguments in the turn's
 *   first step (several lines: parallel calls, in order); once the results come back it answers
 *   with their contents, one per line. Arguments that are not a JSON object give a call with
 *   `invalidArguments` (the raw text), as a real model's malformed arguments do;
 * - `loop <tool> <json arguments>`: the model calls that tool at every step and never answers by
 *   itself (exercises iteration, tool-call, token and time limits);
 * - `slow <ms>`: with `stream: true`, the text streams word by word, `ms` apart (abortable), and
 *   the answer waits `ms` before any tool call: a model that takes its time, for cancel tests.
 *   The line itself is left out of the output.
 * Only offered tools are called (a line naming another tool is plain text); scripted lines take
 * precedence over the name-in-prompt rule above. Call ids stay `toolu_offline_<messages>_<n>`.
 */
export const countWords = (text: string) => {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
};

export const OFFLINE_MODEL_HINT = 'any model name';

function chosenTool(request: LlmRequest, prompt: string): LlmTool | null {
  const tools = request.tools ?? [];
  if (tools.length === 0) return null;
  const choice = request.toolChoice ?? { type: 'auto' };
  switch (choice.type) {
    case 'none':
      return null;
    case 'any':
      return tools[0];
    case 'tool':
      return tools.find((t) => t.name === choice.name) ?? null;
    case 'auto':
      return tools.find((t) => prompt.includes(t.name)) ?? null;
  }
}

function offlineInput(tool: LlmTool, prompt: string): Record<string, unknown> {
  const properties = (tool.inputSchema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.fromEntries(Object.entries(properties).filter(([, schema]) => schema?.type === 'string').map(([name]) => [name, prompt]));
}

const SCRIPT_LINE = /^(call|loop)\s+(\S+)\s*(.*)$/;

/** The scripted calls of the turn's prompt (see above): `call` lines only in its first step, `loop` lines at every step. */
function scriptedCalls(request: LlmRequest, firstStep: boolean): LlmToolCall[] {
  const offered = new Set((request.tools ?? []).map((t) => t.name));
  if (offered.size === 0 || request.toolChoice?.type === 'none') return [];
  const turn = [...request.messages].reverse().find((m) => m.role === 'user' && !m.toolResults?.length && m.content.trim() !== '');
  const calls: LlmToolCall[] = [];
  for (const line of (turn?.content ?? '').split('\n')) {
    const match = SCRIPT_LINE.exec(line.trim());
    if (!match || !offered.has(match[2]) || (match[1] === 'call' && !firstStep)) continue;
    const raw = match[3].trim();
    let input: unknown;
    try {
      input = raw === '' ? {} : JSON.parse(raw);
    } catch {
      input = undefined;
    }
    const id = `toolu_offline_${request.messages.length}_${calls.length}`;
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) calls.push({ id, name: match[2], input: input as Record<string, unknown> });
    else calls.push({ id, name: match[2], input: {}, invalidArguments: raw });
  }
  return calls;
}

/** The `slow <ms>` line of the turn's prompt, in ms (0 without one). */
export function offlineSlowness(request: LlmRequest): number {
  const turn = [...request.messages].reverse().find((m) => m.role === 'user' && !m.toolResults?.length && m.content.trim() !== '');
  const match = /^slow\s+(\d{1,6})\s*$/m.exec(turn?.content ?? '');
  return match ? Number(match[1]) : 0;
}

export function offlineCompletion(request: LlmRequest): LlmResult {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  const results = last?.toolResults ?? [];
  const promptText = last?.content ?? '';
  const shownText = promptText.replace(/^slow\s+\d{1,6}\s*(\n|$)/gm, '');
  const prompt = results.length > 0 ? [...results.map((r) => r.content), ...(shownText ? [shownText] : [])].join('\n') : shownText;
  const scripted = scriptedCalls(request, results.length === 0);
  const tool = results.length > 0 || scripted.length > 0 ? null : chosenTool(request, prompt);
  const toolCalls: LlmToolCall[] = scripted.length > 0 ? scripted : tool ? [{ id: `toolu_offline_${request.messages.length}_0`, name: tool.name, input: offlineInput(tool, prompt) }] : [];
  let text = toolCalls.length > 0 ? '' : prompt;
  let stopSequence: string | undefined;
  for (const sequence of request.stopSequences ?? []) {
    const at = sequence === '' ? -1 : text.indexOf(sequence);
    if (at !== -1 && (stopSequence === undefined || at < text.indexOf(stopSequence))) stopSequence = sequence;
  }
  if (stopSequence !== undefined) text = text.slice(0, text.indexOf(stopSequence));
  const promptTokens = countWords(prompt);
  const completionTokens = countWords(text) + toolCalls.reduce((n, c) => n + countWords(JSON.stringify(c.input)), 0);
  return {
    text,
    usage: { promptTokens, completionTokens, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: promptTokens + completionTokens },
    cost: 0,
    priced: true,
    model: request.model,
    provider: 'offline',
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    ...(toolCalls.length > 0 && { toolCalls }),
    ...(stopSequence !== undefined && { stopSequence }),
  };
}

export function createOfflineProvider(): LlmProvider {
  return {
    id: 'offline',
    // It echoes text; an image or document it cannot echo is refused rather than left out.
    unsupported: (request) => refuseMedia(request, (part) => `${part.type} blocks are not accepted by offline (it reads text only)`),
    async complete(request) {
      if (request.signal?.aborted) throw new LlmAbortError('offline', request.signal.reason);
      const result = offlineCompletion(request);
      const slow = offlineSlowness(request);
      if (slow > 0 && request.stream && result.text) {
        // Word by word, `slow` ms apart: aborting stops it between words.
        for (const piece of result.text.match(/\S+\s*/g) ?? [result.text]) {
          await pause(slow, request.signal);
          request.onDelta?.(piece);
        }
      } else {
        if (slow > 0) await pause(slow, request.signal);
        // One delta with the whole text (and one per tool call): deterministic, and enough for callers that render streams.
        if (request.stream && result.text) request.onDelta?.(result.text);
      }
      if (request.stream) for (const [index, call] of (result.toolCalls ?? []).entries()) request.onToolCallDelta?.({ index, id: call.id, name: call.name, argumentsJson: call.invalidArguments ?? JSON.stringify(call.input) });
      return result;
    },
    async listModels() {
      return ['offline'];
    },
  };
}

/** A real provider's answer takes time, and an abort ends it with the port's abort error. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!(await sleep(ms, signal))) throw new LlmAbortError('offline', signal?.reason);
}
