import { performance } from 'node:perf_hooks';
import { spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmGateway, LlmMessage, LlmResult } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import type { CommandContext } from './handle.js';
import type { ModelRef } from './extension-models.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * Direct AI for the extension (no flow): one answer from an allowed model, streamed through
 * `onDelta` when asked. The organization's budget is checked before the call and what the answer
 * cost is recorded as its spend, like POST /llm/process.
 */
export interface ExtensionAiPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  logger: Logger;
  newId(): string;
}

export interface ExtensionAiRequest {
  model: ModelRef;
  messages: LlmMessage[];
  maxTokens?: number;
  signal?: AbortSignal;
  onDelta?(text: string): void;
}

export interface ExtensionAiAnswer {
  result: LlmResult;
  executionTime: number;
  spend: { position: number | null; streamId: string } | null;
}

export async function askExtensionModel(ports: ExtensionAiPorts, context: CommandContext, caller: LlmCaller, request: ExtensionAiRequest): Promise<ExtensionAiAnswer> {
  const { provider, model } = request.model;
  await assertWithinBudget({ eventStore: ports.eventStore, clock: { now: () => context.now } }, caller, provider);
  const started = performance.now();
  const llm = await ports.llm.providerFor(caller, provider);
  const result = await llm.complete({
    model,
    messages: request.messages,
    maxTokens: request.maxTokens,
    signal: request.signal,
    ...(request.onDelta ? { stream: true, onDelta: request.onDelta } : {}),
  });
  const executionTime = Math.round(performance.now() - started);
  if (!caller.orgId || result.cost <= 0) return { result, executionTime, spend: null };
  try {
    const at = context.now.toISOString();
    const spend = await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId: `extension:${ports.newId()}`, at });
    return { result, executionTime, spend: { position: spend.position, streamId: spendStreamId(caller.orgId, spendPeriodOf(at)) } };
  } catch (err) {
    ports.logger.error({ err, orgId: caller.orgId, cost: result.cost }, 'LLM spend not recorded');
    return { result, executionTime, spend: null };
  }
}

/** The messages of a page question: the page (title, URL, text) as a system message, then the prompt. */
export function pageMessages(prompt: string, page?: { url?: string; title?: string; text?: string } | null): LlmMessage[] {
  const messages: LlmMessage[] = [];
  if (page && (page.url || page.title || page.text)) {
    const lines = ['The user is looking at this web page. Answer about it when the question refers to it.'];
    if (page.title) lines.push(`Title: ${page.title}`);
    if (page.url) lines.push(`URL: ${page.url}`);
    if (page.text) lines.push('Text:', page.text);
    messages.push({ role: 'system', content: lines.join('\n') });
  }
  messages.push({ role: 'user', content: prompt });
  return messages;
}
