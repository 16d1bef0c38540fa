import type { LlmMediaPart, LlmRequest } from '../ports/llm.js';
import type { TokenCounter } from '../ports/tokenizer.js';

/**
 * An estimate of a request's input tokens for providers without a counting endpoint (all but
 * Anthropic): text counted with the tokenizer port (o200k_base, OpenAI's own encoding for its
 * models), tool definitions and calls as their JSON, plus fixed allowances where the bytes say
 * little: an image at 1,600 tokens (Anthropic's figure for its largest unresized image), a PDF at
 * 3,000 tokens per page (pages counted from its `/Type /Page` objects; one page when unknown),
 * and 4 tokens of framing per message. It errs high, which is what a client sizing its context wants.
 */
export const IMAGE_TOKENS = 1_600;
export const PDF_PAGE_TOKENS = 3_000;
const MESSAGE_FRAMING = 4;

function pdfPages(part: LlmMediaPart): number {
  if (part.source.type !== 'base64') return 1;
  const text = Buffer.from(part.source.data, 'base64').toString('latin1');
  return Math.max(1, (text.match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length);
}

function mediaTokens(part: LlmMediaPart, count: (text: string) => number): number {
  if (part.type === 'image') return IMAGE_TOKENS;
  if (part.source.type === 'base64' && part.source.mediaType === 'text/plain') return count(Buffer.from(part.source.data, 'base64').toString('utf8'));
  return PDF_PAGE_TOKENS * pdfPages(part);
}

export function estimateInputTokens(request: LlmRequest, counter: TokenCounter): number {
  const count = (text: string) => (text === '' ? 0 : counter.count(text));
  let total = 0;
  for (const m of request.messages) {
    total += MESSAGE_FRAMING;
    const parts = m.parts ?? [{ type: 'text' as const, text: m.content }];
    for (const p of parts) {
      if (p.type === 'text') total += count(p.text);
      else if (p.type === 'thinking') total += count(p.thinking);
      else if (p.type === 'image' || p.type === 'document') total += mediaTokens(p, count);
    }
    for (const c of m.toolCalls ?? []) total += count(`${c.name} ${JSON.stringify(c.input)}`);
    for (const r of m.toolResults ?? []) {
      total += count(r.content);
      for (const p of r.parts ?? []) if (p.type !== 'text') total += mediaTokens(p, count);
    }
  }
  for (const t of request.tools ?? []) total += count(JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  return total;
}
