import type { LlmMediaPart, LlmMessage, LlmPart, LlmProviderId, LlmRequest, LlmContentRefusal } from '../../ports/llm.js';
import { dataUrl, describeSource, isImageType, refuseMedia, withoutThinking } from './content.js';

/**
 * Images and documents in Chat Completions: an image is an `image_url` part (a data: URL when
 * inline), a PDF a `file` part with `file_data` — OpenAI's own API takes it, the self-hosted
 * servers behind `openai_compatible` mostly do not, so there it is refused. Chat Completions'
 * `tool` messages carry text only: media from tool results follow in a user message.
 */

/** What this provider cannot take, named by the client's field. */
export function openAiRefusal(id: LlmProviderId, request: LlmRequest): LlmContentRefusal | null {
  return refuseMedia(request, (part) => {
    const source = part.source;
    if (part.type === 'image') {
      if (source.type === 'url') return null;
      if (source.type === 'base64' && isImageType(source.mediaType)) return null;
      return `${describeSource(part)} blocks are not accepted by ${id}`;
    }
    if (id !== 'openai') return `document blocks are not accepted by ${id} (Chat Completions servers other than OpenAI's take no files)`;
    if (source.type === 'base64' && source.mediaType === 'application/pdf') return null;
    return `${describeSource(part)} blocks are not accepted by openai (it takes PDFs inline, as base64)`;
  });
}

function openAiPart(part: Exclude<LlmPart, { type: 'thinking' | 'redacted_thinking' }>): unknown {
  if (part.type === 'text') return { type: 'text', text: part.text };
  return mediaPart(part);
}

function mediaPart(part: LlmMediaPart): unknown {
  const source = part.source;
  // openAiRefusal ran before the call; anything else reaching here is a bug, not a request to drop.
  if (source.type === 'anthropic') throw new Error(`${part.field}: ${source.kind} source reached the OpenAI adapter`);
  const url = source.type === 'base64' ? dataUrl(source.mediaType, source.data) : source.url;
  if (part.type === 'image') return { type: 'image_url', image_url: { url } };
  const title = typeof part.original?.title === 'string' && part.original.title ? part.original.title : 'document.pdf';
  return { type: 'file', file: { filename: title, file_data: url } };
}

/** A message's own content: a string when it is text only, else the parts (thinking left out: only its author reads it). */
export function openAiContent(m: LlmMessage): unknown {
  if (!m.parts) return m.content;
  const parts = withoutThinking(m.parts);
  if (m.role === 'assistant' || parts.every((p) => p.type === 'text')) return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  return parts.map(openAiPart);
}

/** Media of a user turn's tool results, as the parts of a user message that follows the `tool` messages. */
export function toolResultMedia(m: LlmMessage): unknown[] {
  return (m.toolResults ?? []).flatMap((r) => {
    const media = (r.parts ?? []).filter((p): p is LlmMediaPart => p.type === 'image' || p.type === 'document');
    return media.length === 0 ? [] : [{ type: 'text', text: `Attached to the result of tool call ${r.toolCallId}:` }, ...media.map(mediaPart)];
  });
}
