import { expect } from 'chai';
import { estimateInputTokens, IMAGE_TOKENS, PDF_PAGE_TOKENS } from '../../commands/cli-llm-estimate.js';
import { geminiRefusal } from '../../infra/llm/gemini-content.js';
import { openAiRefusal } from '../../infra/llm/openai-content.js';
import type { LlmMediaPart, LlmRequest } from '../../ports/llm.js';

const media = (type: 'image' | 'document', source: LlmMediaPart['source'], field = 'body.messages.0.content.0'): LlmMediaPart => ({ type, source, field });
const request = (...parts: LlmMediaPart[]): LlmRequest => ({ model: 'm', messages: [{ role: 'user', content: 'look', parts: [...parts, { type: 'text', text: 'look' }] }] });
const pdf = (pages: number) => Buffer.from(`%PDF-1.4\n${'<< /Type /Page >>\n'.repeat(pages)}<< /Type /Pages /Count ${pages} >>`).toString('base64');

describe('LLM content parts: what each provider refuses, and the token estimate', () => {
  it('OpenAI takes inline PDFs; an openai_compatible server takes no documents at all', () => {
    const doc = media('document', { type: 'base64', mediaType: 'application/pdf', data: pdf(1) }, 'body.messages.0.content.3');
    expect(openAiRefusal('openai', request(doc))).to.equal(null);
    expect(openAiRefusal('openai_compatible', request(doc))).to.deep.include({ field: 'body.messages.0.content.3' });
    expect(openAiRefusal('openai_compatible', request(media('image', { type: 'url', url: 'https://x/y.png' })))).to.equal(null);
    expect(openAiRefusal('openai', request(media('document', { type: 'anthropic', kind: 'file' }))))
      .to.have.property('message')
      .that.includes('file source');
  });

  it('Gemini takes inline bytes only', () => {
    expect(geminiRefusal(request(media('image', { type: 'base64', mediaType: 'image/webp', data: 'AA==' })))).to.equal(null);
    expect(geminiRefusal(request(media('image', { type: 'url', url: 'https://x/y.png' }, 'body.messages.0.content.0')))).to.deep.include({ field: 'body.messages.0.content.0' });
  });

  it('estimates an image at a fixed allowance and a PDF by its pages', () => {
    const counter = { encoding: 'words', estimate: true, note: '', count: (t: string) => t.split(/\s+/).filter(Boolean).length };
    const text = estimateInputTokens(request(), counter);
    expect(estimateInputTokens(request(media('image', { type: 'base64', mediaType: 'image/png', data: 'AA==' })), counter) - text).to.equal(IMAGE_TOKENS);
    expect(estimateInputTokens(request(media('document', { type: 'base64', mediaType: 'application/pdf', data: pdf(3) })), counter) - text).to.equal(3 * PDF_PAGE_TOKENS);
  });
});
