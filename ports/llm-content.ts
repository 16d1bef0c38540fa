/**
 * Content beyond text that a caller may put in messages (ports/llm.ts): images and documents, and
 * the model's thinking that must go back to it unchanged. Only the CLI's LLM proxy sets these
 * today; adapters that cannot take a part say so through `LlmProvider.unsupported` before any
 * call, so nothing is dropped silently.
 */

/**
 * Where the bytes are: inline (base64), a URL the provider fetches itself, or a source only
 * Anthropic knows (`file`, `text`, `content`; `kind` names it), sent in `original` as it came.
 */
export type LlmMediaSource = { type: 'base64'; mediaType: string; data: string } | { type: 'url'; url: string } | { type: 'anthropic'; kind: string };

export interface LlmMediaPart {
  type: 'image' | 'document';
  source: LlmMediaSource;
  /** The caller's field for this block (`body.messages.0.content.1`), named when a provider refuses it. */
  field: string;
  /**
   * The block exactly as the client sent it in Anthropic's format (title, context, citations,
   * cache_control…): the Anthropic adapter sends it as is.
   */
  original?: Record<string, unknown>;
}

/** Thinking is opaque to us: the signature (or the redacted data) must reach the provider unchanged. */
export type LlmThinkingPart = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

export type LlmTextPart = { type: 'text'; text: string; original?: Record<string, unknown> };

/** A message's content in order, when it is more than text (then `content` holds its text joined). */
export type LlmPart = LlmTextPart | LlmMediaPart | LlmThinkingPart;

/** A streamed piece of thinking: `index` counts the answer's thinking blocks from 0. */
export type LlmThinkingDelta =
  | { index: number; type: 'thinking'; thinking?: string; signature?: string }
  | { index: number; type: 'redacted_thinking'; data: string };

/** The caller's extended-thinking setting, passed to providers that have one (Anthropic). */
export type LlmThinkingConfig = { type: 'enabled'; budgetTokens: number } | { type: 'disabled' };

/** Why a provider cannot take a request's content: the field and what it is. */
export interface LlmContentRefusal {
  field: string;
  message: string;
}

export const isMediaPart = (part: LlmPart | { type: string }): part is LlmMediaPart => part.type === 'image' || part.type === 'document';
