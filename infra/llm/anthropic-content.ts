import type { LlmPart, LlmThinkingPart, LlmToolResult } from '../../ports/llm.js';

/**
 * Port parts as Anthropic content blocks. Blocks that came from an Anthropic client keep their
 * original shape (title, context, citations, cache_control…); thinking goes back byte for byte,
 * since Anthropic checks its signature.
 */
export function anthropicBlock(part: LlmPart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return part.original ?? { type: 'text', text: part.text };
    case 'thinking':
      return { type: 'thinking', thinking: part.thinking, signature: part.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: part.data };
    default: {
      if (part.original) return part.original;
      const source = part.source;
      if (source.type === 'base64') return { type: part.type, source: { type: 'base64', media_type: source.mediaType, data: source.data } };
      if (source.type === 'url') return { type: part.type, source: { type: 'url', url: source.url } };
      throw new Error(`${part.field}: a ${source.kind} source without its original block`);
    }
  }
}

export function anthropicToolResult(r: LlmToolResult): Record<string, unknown> {
  const content = r.parts ? r.parts.map(anthropicBlock) : r.content;
  return { type: 'tool_result', tool_use_id: r.toolCallId, content, ...(r.isError && { is_error: true }) };
}

/** Thinking blocks of an answer, from the raw content blocks (non-streaming). */
export function thinkingOf(blocks: Array<{ type: string; thinking?: string; signature?: string; data?: string }>): LlmThinkingPart[] {
  return blocks.flatMap((b): LlmThinkingPart[] => {
    if (b.type === 'thinking') return [{ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' }];
    if (b.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: b.data ?? '' }];
    return [];
  });
}
