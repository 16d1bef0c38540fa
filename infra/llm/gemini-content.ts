import type { LlmContentRefusal, LlmMediaPart, LlmMessage, LlmRequest } from '../../ports/llm.js';
import { describeSource, isImageType, refuseMedia, withoutThinking } from './content.js';

/**
 * Images and documents for Gemini: inline bytes are `inline_data` parts (images, PDFs, plain
 * text). Gemini's `file_data` takes only its own Files API URIs, so a URL source is refused
 * rather than fetched by us.
 */
const GEMINI_INLINE = (mediaType: string) => isImageType(mediaType) || mediaType === 'application/pdf' || mediaType === 'text/plain';

export function geminiRefusal(request: LlmRequest): LlmContentRefusal | null {
  return refuseMedia(request, (part) => (part.source.type === 'base64' && GEMINI_INLINE(part.source.mediaType) ? null : `${describeSource(part)} blocks are not accepted by google (it takes inline images, PDFs and text)`));
}

export function inlineData(part: LlmMediaPart): unknown {
  // geminiRefusal ran before the call; anything else reaching here is a bug, not a part to drop.
  if (part.source.type !== 'base64') throw new Error(`${part.field}: only inline sources reach the Gemini adapter`);
  return { inline_data: { mime_type: part.source.mediaType, data: part.source.data } };
}

/** A message's own parts (thinking left out: only its author reads it); null when the message is text only. */
export function geminiOwnParts(m: LlmMessage): unknown[] | null {
  if (!m.parts) return null;
  return withoutThinking(m.parts).map((p) => (p.type === 'text' ? { text: p.text } : inlineData(p)));
}

/** The media of a tool result, as parts after its functionResponse. */
export const toolResultParts = (m: LlmMessage) =>
  (m.toolResults ?? []).flatMap((r) => (r.parts ?? []).filter((p): p is LlmMediaPart => p.type === 'image' || p.type === 'document').map(inlineData));
