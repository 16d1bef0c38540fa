import { z } from 'zod';
import type { LlmMediaPart, LlmPart, LlmThinkingPart } from '../../ports/llm.js';

/**
 * Anthropic's content blocks beyond text and tools, as POST /cli/llm/messages accepts them:
 * `image` and `document` (base64 and url sources; Anthropic's other sources pass to Anthropic
 * only), `thinking` and `redacted_thinking` (given back to the provider unchanged). Their
 * translation to the port's parts; providers refuse what they cannot take (UNSUPPORTED_CONTENT).
 */
const cacheControl = { cache_control: z.unknown().optional() };

const base64Image = z.object({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.string().min(1) });
const base64Document = z.object({ type: z.literal('base64'), media_type: z.literal('application/pdf'), data: z.string().min(1) });
const urlSource = z.object({ type: z.literal('url'), url: z.url({ protocol: /^https?$/ }).max(8_192) });
/** Sources only Anthropic reads (Files API ids, plain text, nested content): sent to it as they are. */
const anthropicOnlySource = (kinds: [string, ...string[]]) => z.object({ type: z.enum(kinds) }).passthrough();

export const imageBlock = z.object({ type: z.literal('image'), source: z.discriminatedUnion('type', [base64Image, urlSource, anthropicOnlySource(['file'])]), ...cacheControl }).passthrough();
export const documentBlock = z
  .object({ type: z.literal('document'), source: z.discriminatedUnion('type', [base64Document, urlSource, anthropicOnlySource(['file', 'text', 'content'])]), ...cacheControl })
  .passthrough();
export const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
export const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

export type ImageBlock = z.infer<typeof imageBlock>;
export type DocumentBlock = z.infer<typeof documentBlock>;

/** An image or document block as the port's part; `original` keeps it for Anthropic. */
export function mediaPart(block: ImageBlock | DocumentBlock, field: string): LlmMediaPart {
  const source = block.source as { type: string; media_type?: string; data?: string; url?: string };
  const port: LlmMediaPart['source'] =
    source.type === 'base64' ? { type: 'base64', mediaType: source.media_type!, data: source.data! } : source.type === 'url' ? { type: 'url', url: source.url! } : { type: 'anthropic', kind: source.type };
  return { type: block.type, source: port, field, original: block as Record<string, unknown> };
}

export function thinkingPart(block: z.infer<typeof thinkingBlock> | z.infer<typeof redactedThinkingBlock>): LlmThinkingPart {
  return block.type === 'thinking' ? { type: 'thinking', thinking: block.thinking, signature: block.signature } : { type: 'redacted_thinking', data: block.data };
}

/** Parts are kept only when there is more than text: plain text stays the port's `content` alone. */
export const needsParts = (parts: LlmPart[]) => parts.some((p) => p.type !== 'text');

/** The answer's thinking as Anthropic content blocks (they come first, as Anthropic puts them). */
export const thinkingBlocks = (thinking: LlmThinkingPart[] | undefined) =>
  (thinking ?? []).map((t) => (t.type === 'thinking' ? { type: 'thinking' as const, thinking: t.thinking, signature: t.signature } : { type: 'redacted_thinking' as const, data: t.data }));
