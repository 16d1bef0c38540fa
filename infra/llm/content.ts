import type { LlmContentRefusal, LlmMediaPart, LlmPart, LlmRequest } from '../../ports/llm.js';
import { isMediaPart } from '../../ports/llm.js';

/**
 * Helpers the adapters share for content beyond text (ports/llm-content.ts): finding the media a
 * request carries, so each adapter can refuse what its provider cannot take before any call.
 */

/** Every image and document of the request, in messages and in tool results, in order. */
export function mediaOf(request: LlmRequest): Array<{ part: LlmMediaPart; inToolResult: boolean }> {
  const found: Array<{ part: LlmMediaPart; inToolResult: boolean }> = [];
  for (const message of request.messages) {
    for (const result of message.toolResults ?? []) for (const part of result.parts ?? []) if (isMediaPart(part)) found.push({ part, inToolResult: true });
    for (const part of message.parts ?? []) if (isMediaPart(part)) found.push({ part, inToolResult: false });
  }
  return found;
}

/** The first media part `why` refuses (it returns the reason), as the port's refusal. */
export function refuseMedia(request: LlmRequest, why: (part: LlmMediaPart, inToolResult: boolean) => string | null): LlmContentRefusal | null {
  for (const { part, inToolResult } of mediaOf(request)) {
    const reason = why(part, inToolResult);
    if (reason) return { field: part.field, message: reason };
  }
  return null;
}

export const dataUrl = (mediaType: string, data: string) => `data:${mediaType};base64,${data}`;

export const isImageType = (mediaType: string) => /^image\/(jpeg|png|gif|webp)$/.test(mediaType);

/** Media types other than the source's own: `url` and Anthropic-only sources say what they are. */
export function describeSource(part: LlmMediaPart): string {
  if (part.source.type === 'base64') return `${part.type} (${part.source.mediaType})`;
  if (part.source.type === 'url') return `${part.type} with a url source`;
  return `${part.type} with a ${part.source.kind} source`;
}

/** A message's parts without thinking, which only the provider that wrote it can read. */
export const withoutThinking = (parts: LlmPart[]) => parts.filter((p): p is Exclude<LlmPart, { type: 'thinking' | 'redacted_thinking' }> => p.type !== 'thinking' && p.type !== 'redacted_thinking');
