import type { Writable } from 'node:stream';
import { z } from 'zod';
import { DomainError } from '../../domain/shared/decider.js';
import type { LlmMessage, LlmPart, LlmResult, LlmThinkingConfig, LlmThinkingDelta, LlmTool, LlmToolCallDelta, LlmToolChoice, LlmToolResult, LlmUsage } from '../../ports/llm.js';
import type { ErrorRenderer } from '../route.js';
import { documentBlock, imageBlock, mediaPart, needsParts, redactedThinkingBlock, thinkingBlock, thinkingBlocks, thinkingPart } from './cli-llm-content.js';

/**
 * The Anthropic Messages wire format as POST /cli/llm/messages speaks it: the request schema, its
 * translation to the LLM port, the answer (JSON or the Messages SSE sequence) and Anthropic's
 * error body. Unknown top-level fields (beta options clients send) are ignored, not refused.
 */

const cacheControl = { cache_control: z.unknown().optional() };
const textBlock = z.object({ type: z.literal('text'), text: z.string(), ...cacheControl });
const toolUseBlock = z.object({ type: z.literal('tool_use'), id: z.string().min(1).max(200), name: z.string().min(1).max(200), input: z.record(z.string(), z.unknown()), ...cacheControl });
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(200),
  // Text, images and documents (Anthropic's search_result blocks are not taken: 400 naming the block's type).
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock]))]).optional(),
  is_error: z.boolean().optional(),
  ...cacheControl,
});
const contentBlock = z.discriminatedUnion('type', [textBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock, imageBlock, documentBlock]);

export const messagesBody = z.object({
  model: z.string().trim().min(1).max(200),
  max_tokens: z.number().int().min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(contentBlock)]) }))
    .min(1)
    .max(10_000),
  tools: z
    .array(z.object({ name: z.string().min(1).max(128), description: z.string().max(100_000).optional(), input_schema: z.record(z.string(), z.unknown()), type: z.literal('custom').optional(), ...cacheControl }))
    .max(500)
    .optional(),
  tool_choice: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
      z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
      z.object({ type: z.literal('none') }),
      z.object({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
    ])
    .optional(),
  temperature: z.number().min(0).max(1).optional(),
  stop_sequences: z.array(z.string().min(1).max(500)).max(16).optional(),
  stream: z.boolean().optional(),
  metadata: z.object({ user_id: z.string().max(256).nullish() }).optional(),
  // Anthropic's minimum budget is 1,024 tokens; providers without extended thinking ignore it.
  thinking: z.discriminatedUnion('type', [z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }), z.object({ type: z.literal('disabled') })]).optional(),
});
export type MessagesBody = z.infer<typeof messagesBody>;

const usageReply = z.object({ input_tokens: z.number(), output_tokens: z.number(), cache_creation_input_tokens: z.number(), cache_read_input_tokens: z.number() });
export const messageReply = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(
    z.union([
      z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
      z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
    ]),
  ),
  stop_reason: z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'refusal']),
  stop_sequence: z.string().nullable(),
  usage: usageReply,
});
export const anthropicErrorReply = z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) });

const unsupported = (field: string, what: string) =>
  new DomainError('UNSUPPORTED_CONTENT', `${field}: ${what} blocks are not supported by this proxy`, 'invalid', { fields: [{ field, message: `${what} blocks are not supported` }] });

/** A tool result's content: its text, and its parts when it carries images or documents. */
function resultOf(block: z.infer<typeof toolResultBlock>, field: string): LlmToolResult {
  const base = { toolCallId: block.tool_use_id, ...(block.is_error && { isError: true }) };
  if (block.content === undefined || typeof block.content === 'string') return { ...base, content: block.content ?? '' };
  const parts = block.content.map((b, i): LlmPart & { type: 'text' | 'image' | 'document' } => {
    const where = `${field}.content.${i}`;
    return b.type === 'text' ? { type: 'text', text: b.text, original: b } : mediaPart(b, where);
  });
  const content = parts.map((p) => (p.type === 'text' ? p.text : '')).filter((t) => t !== '').join('\n');
  return { ...base, content, ...(needsParts(parts) && { parts }) };
}

export interface TranslatedRequest {
  messages: LlmMessage[];
  tools?: LlmTool[];
  toolChoice?: LlmToolChoice;
  stopSequences?: string[];
  thinking?: LlmThinkingConfig;
  /** The last user turn as text (its tool results' contents, then its text), for prompt logging. */
  promptText: string;
}

/**
 * Anthropic's request as the port's: system first, tool results before the user's text; a turn
 * with images, documents or thinking keeps them in order as `parts`.
 */
export function toLlmRequest(body: Omit<MessagesBody, 'max_tokens'>): TranslatedRequest {
  const messages: LlmMessage[] = [];
  const system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text).join('\n\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  body.messages.forEach((message, m) => {
    if (typeof message.content === 'string') return void messages.push({ role: message.role, content: message.content });
    const texts: string[] = [];
    const parts: LlmPart[] = [];
    const toolCalls: NonNullable<LlmMessage['toolCalls']> = [];
    const toolResults: NonNullable<LlmMessage['toolResults']> = [];
    message.content.forEach((block, b) => {
      const field = `body.messages.${m}.content.${b}`;
      switch (block.type) {
        case 'text':
          texts.push(block.text);
          parts.push({ type: 'text', text: block.text, original: block });
          break;
        case 'tool_use':
          if (message.role !== 'assistant') throw unsupported(field, 'user tool_use');
          toolCalls.push({ id: block.id, name: block.name, input: block.input });
          break;
        case 'tool_result':
          if (message.role !== 'user') throw unsupported(field, 'assistant tool_result');
          toolResults.push(resultOf(block, field));
          break;
        case 'thinking':
        case 'redacted_thinking':
          if (message.role !== 'assistant') throw unsupported(field, `user ${block.type}`);
          parts.push(thinkingPart(block));
          break;
        case 'image':
        case 'document':
          if (message.role !== 'user') throw unsupported(field, `assistant ${block.type}`);
          parts.push(mediaPart(block, field));
          break;
      }
    });
    messages.push({
      role: message.role,
      content: texts.join('\n'),
      ...(toolCalls.length > 0 && { toolCalls }),
      ...(toolResults.length > 0 && { toolResults }),
      ...(needsParts(parts) && { parts }),
    });
  });
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const promptText = [...(lastUser?.toolResults ?? []).map((r) => r.content), ...(lastUser?.content ? [lastUser.content] : [])].join('\n');
  const tools = body.tools?.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), inputSchema: t.input_schema }));
  const choice = body.tool_choice;
  const toolChoice: LlmToolChoice | undefined = choice ? (choice.type === 'tool' ? { type: 'tool', name: choice.name } : { type: choice.type }) : undefined;
  return {
    messages,
    ...(tools && tools.length > 0 && { tools }),
    ...(toolChoice && { toolChoice }),
    ...(body.stop_sequences && body.stop_sequences.length > 0 && { stopSequences: body.stop_sequences }),
    ...(body.thinking && { thinking: body.thinking.type === 'enabled' ? { type: 'enabled', budgetTokens: body.thinking.budget_tokens } : { type: 'disabled' } }),
    promptText,
  };
}

export type StopReason = z.infer<typeof messageReply>['stop_reason'];

export function stopReasonOf(result: LlmResult): StopReason {
  switch (result.finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return result.stopSequence ? 'stop_sequence' : 'end_turn';
  }
}

/** Anthropic's counters: input_tokens without the cache reads and writes, which have their own. */
export function anthropicUsage(usage: LlmUsage) {
  return {
    input_tokens: Math.max(0, usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedTokens,
  };
}

export function messageOf(id: string, model: string, result: LlmResult): z.infer<typeof messageReply> {
  const calls = (result.toolCalls ?? []).map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.input }));
  const text = result.text !== '' || calls.length === 0 ? [{ type: 'text' as const, text: result.text }] : [];
  return { id, type: 'message', role: 'assistant', model, content: [...thinkingBlocks(result.thinking), ...text, ...calls], stop_reason: stopReasonOf(result), stop_sequence: result.stopSequence ?? null, usage: anthropicUsage(result.usage) };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  499: 'invalid_request_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

export const anthropicErrorType = (status: number) => ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

/** `{type: "error", error: {type, message}}`, as Anthropic's clients parse errors; our code leads the message. */
export const renderAnthropicError: ErrorRenderer = (status, error) => ({ type: 'error', error: { type: anthropicErrorType(status), message: `${error.code}: ${error.message}` } });

/**
 * The Messages SSE sequence, written as the port's deltas arrive: message_start (and a ping), one
 * content block per text run or tool call (text_delta / input_json_delta), then message_delta with
 * the stop reason and the whole usage, message_stop. `error` ends a stream that failed midway.
 */
export class MessagesSseWriter {
  private started = false;
  private block: { index: number; kind: 'text' | 'tool' | 'thinking'; toolIndex?: number } | null = null;
  private nextIndex = 0;
  private pinger: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: Writable,
    private readonly id: string,
    private readonly model: string,
  ) {}

  get hasStarted() {
    return this.started;
  }

  private send(type: string, data: Record<string, unknown>) {
    if (!this.out.writableEnded) this.out.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  }

  start() {
    if (this.started) return;
    this.started = true;
    this.send('message_start', {
      message: { id: this.id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
    });
    this.send('ping', {});
    // Keeps proxies and clients from timing out an idle connection while the model thinks.
    this.pinger = setInterval(() => this.send('ping', {}), 15_000);
    this.pinger.unref?.();
  }

  private closeBlock() {
    if (this.block) this.send('content_block_stop', { index: this.block.index });
    this.block = null;
  }

  text(piece: string) {
    this.start();
    if (this.block?.kind !== 'text') {
      this.closeBlock();
      this.block = { index: this.nextIndex++, kind: 'text' };
      this.send('content_block_start', { index: this.block.index, content_block: { type: 'text', text: '' } });
    }
    this.send('content_block_delta', { index: this.block.index, delta: { type: 'text_delta', text: piece } });
  }

  tool(delta: LlmToolCallDelta) {
    this.start();
    if (this.block?.kind !== 'tool' || this.block.toolIndex !== delta.index) {
      this.closeBlock();
      this.block = { index: this.nextIndex++, kind: 'tool', toolIndex: delta.index };
      this.send('content_block_start', { index: this.block.index, content_block: { type: 'tool_use', id: delta.id ?? `toolu_${this.id}_${delta.index}`, name: delta.name ?? '', input: {} } });
    }
    if (delta.argumentsJson) this.send('content_block_delta', { index: this.block.index, delta: { type: 'input_json_delta', partial_json: delta.argumentsJson } });
  }

  /** Thinking comes first in an answer; each of the provider's thinking blocks is one block here. */
  thinking(delta: LlmThinkingDelta) {
    this.start();
    if (this.block?.kind !== 'thinking' || this.block.toolIndex !== delta.index) {
      this.closeBlock();
      this.block = { index: this.nextIndex++, kind: 'thinking', toolIndex: delta.index };
      const start = delta.type === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'redacted_thinking', data: delta.data };
      this.send('content_block_start', { index: this.block.index, content_block: start });
    }
    if (delta.type !== 'thinking') return;
    if (delta.thinking) this.send('content_block_delta', { index: this.block.index, delta: { type: 'thinking_delta', thinking: delta.thinking } });
    if (delta.signature) this.send('content_block_delta', { index: this.block.index, delta: { type: 'signature_delta', signature: delta.signature } });
  }

  finish(result: LlmResult) {
    this.start();
    // An answer with neither text nor tool calls still has its (empty) text block, as Anthropic sends it.
    if (this.nextIndex === 0) this.text('');
    this.closeBlock();
    this.send('message_delta', { delta: { stop_reason: stopReasonOf(result), stop_sequence: result.stopSequence ?? null }, usage: anthropicUsage(result.usage) });
    this.send('message_stop', {});
    this.end();
  }

  fail(status: number, message: string) {
    this.send('error', { error: { type: anthropicErrorType(status), message } });
    this.end();
  }

  end() {
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    if (!this.out.writableEnded) this.out.end();
  }
}

/**
 * What every route of the proxy shares: Anthropic's credential header and error shape, and a body
 * limit of its own (images and PDFs arrive base64: CLI_LLM_BODY_LIMIT_BYTES).
 */
export const proxyRouteOptions = {
  tag: 'CLI',
  auth: 'bearer' as const,
  credentialHeader: 'x-api-key',
  renderError: renderAnthropicError,
  errorSchema: anthropicErrorReply,
  bodyLimitBytes: (config: { BODY_LIMIT_BYTES: number; CLI_LLM_BODY_LIMIT_BYTES: number }) => Math.max(config.BODY_LIMIT_BYTES, config.CLI_LLM_BODY_LIMIT_BYTES),
};
