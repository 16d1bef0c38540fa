import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { fakeSignature } from '../support/fake-llm/anthropic.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

async function cliToken(svc: TestService, auth: Record<string, string>): Promise<string> {
  const code = await call(svc.baseUrl, 'POST', '/cli/device/code', { clientName: 'agent' });
  await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: code.body.user_code }, auth);
  const token = await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: code.body.device_code, grant_type: GRANT });
  expect(token.status, token.text).to.equal(200);
  return token.body.access_token as string;
}

// A 1×1 PNG and a one-page PDF skeleton: small, but what a client really sends.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n%%EOF').toString('base64');
const image: Anthropic.ImageBlockParam = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
const imageUrl: Anthropic.ImageBlockParam = { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } };
const pdf: Anthropic.DocumentBlockParam = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' };
const pdfUrl: Anthropic.DocumentBlockParam = { type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } };
const lookTool: Anthropic.Tool = { name: 'screenshot', description: 'takes a screenshot', input_schema: { type: 'object', properties: {} } };

/** A turn where a tool answered with an image, after the user's own image and PDF. */
const toolTurn = (blocks: Anthropic.ContentBlockParam[]): Anthropic.MessageParam[] => [
  { role: 'user', content: blocks },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'the screen' }, image] }, { type: 'text', text: 'What do you see?' }] },
];

for (const mode of availableModes()) {
  describe(`CLI LLM proxy: images, documents, thinking, count_tokens (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let openai: FakeLlmServer;
    let anthropic: FakeLlmServer;
    let gemini: FakeLlmServer;
    let token: string;
    const client = () => new Anthropic({ apiKey: token, baseURL: `${svc.baseUrl}/cli/llm`, maxRetries: 0 });
    const lastBody = (fake: FakeLlmServer, path = '') => fake.requestsTo(path).at(-1)!.body;

    /** The proxy's 400 for a block the provider cannot take: Anthropic's shape, our code, the block's field. */
    async function expectUnsupported(model: string, messages: Anthropic.MessageParam[], field: string) {
      try {
        await client().messages.create({ model, max_tokens: 50, messages });
        expect.fail('the block was accepted');
      } catch (err) {
        expect(err, String(err)).to.be.instanceOf(Anthropic.BadRequestError);
        const message = ((err as InstanceType<typeof Anthropic.BadRequestError>).error as any).error.message as string;
        expect(message).to.match(/^UNSUPPORTED_CONTENT: /);
        expect(message).to.include(field);
      }
    }

    before(async () => {
      [openai, anthropic, gemini] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
      svc = await startTestService(mode, {
        RATE_LIMIT_AUTH_PER_MINUTE: '1000',
        OPENAI_API_KEY: 'provider-key',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: 'provider-key',
        ANTHROPIC_BASE_URL: anthropic.url,
        GEMINI_API_KEY: 'provider-key',
        GEMINI_BASE_URL: gemini.url,
        LLM_MAX_RETRIES: '0',
        CLI_LLM_MODEL_MAP: JSON.stringify({
          'claude-offline': { provider: 'offline' },
          'claude-via-openai': { provider: 'openai', model: 'gpt-4o' },
          'claude-via-anthropic': { provider: 'anthropic', model: 'claude-sonnet-4-0' },
          'claude-via-gemini': { provider: 'google', model: 'gemini-2.0-flash' },
        }),
      });
      const alice = await registerUser(svc.baseUrl);
      token = await cliToken(svc, alice.auth);
    });
    after(async () => {
      await svc?.stop();
      await Promise.all([openai, anthropic, gemini].map((f) => f?.close()));
    });
    afterEach(() => [openai, anthropic, gemini].forEach((f) => f.reset()));

    it('passes images and documents (base64 and url, in tool results too) to Anthropic as they are', async () => {
      const blocks: Anthropic.ContentBlockParam[] = [image, imageUrl, pdf, pdfUrl, { type: 'text', text: 'Compare these.' }];
      const messages = toolTurn(blocks);
      const answer = await client().messages.create({ model: 'claude-via-anthropic', max_tokens: 50, tools: [lookTool], messages });
      expect(answer.content).to.deep.equal([{ type: 'text', text: 'Hello from the fake.' }]);
      const sent = lastBody(anthropic, '/v1/messages');
      expect(sent.messages).to.deep.equal(messages);
    });

    it('takes an image larger than BODY_LIMIT_BYTES (CLI_LLM_BODY_LIMIT_BYTES bounds the proxy) and passes it whole', async () => {
      const big = 'A'.repeat(3 * 1024 * 1024); // 3 MiB of base64, past the service's 1 MiB body limit
      expect(big.length).to.be.greaterThan(svc.services.config.BODY_LIMIT_BYTES);
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }, { type: 'text', text: 'A big screenshot.' }] }];
      await client().messages.create({ model: 'claude-via-anthropic', max_tokens: 50, messages });
      expect((lastBody(anthropic, '/v1/messages').messages[0].content[0].source.data as string).length).to.equal(big.length);
      const tooBig = await fetch(`${svc.baseUrl}/cli/llm/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': token },
        body: JSON.stringify({ model: 'claude-via-anthropic', max_tokens: 50, messages: [{ role: 'user', content: 'x'.repeat(svc.services.config.CLI_LLM_BODY_LIMIT_BYTES + 1) }] }),
      });
      expect(tooBig.status).to.equal(413);
    });

    it('translates images and PDFs for OpenAI: image_url (a data: URL when inline), file parts, tool-result images in a user message', async () => {
      await client().messages.create({ model: 'claude-via-openai', max_tokens: 50, tools: [lookTool], messages: toolTurn([{ type: 'text', text: 'Look:' }, image, imageUrl, pdf]) });
      const sent = lastBody(openai, '/chat/completions').messages;
      expect(sent[0]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
        ],
      });
      expect(sent[2]).to.deep.equal({ role: 'tool', tool_call_id: 'toolu_1', content: 'the screen' });
      expect(sent[3]).to.deep.equal({
        role: 'user',
        content: [
          { type: 'text', text: 'Attached to the result of tool call toolu_1:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'text', text: 'What do you see?' },
        ],
      });
    });

    it('refuses what OpenAI cannot take (a PDF by URL) with 400 UNSUPPORTED_CONTENT naming the block, without calling it', async () => {
      await expectUnsupported('claude-via-openai', [{ role: 'user', content: [{ type: 'text', text: 'read' }, pdfUrl] }], 'body.messages.0.content.1');
      expect(openai.requests).to.have.length(0);
    });

    it('sends inline images and PDFs to Gemini as inline_data, and refuses URL sources by field', async () => {
      await client().messages.create({ model: 'claude-via-gemini', max_tokens: 50, messages: [{ role: 'user', content: [image, pdf, { type: 'text', text: 'Describe.' }] }] });
      const parts = lastBody(gemini).contents[0].parts;
      expect(parts).to.deep.equal([{ inline_data: { mime_type: 'image/png', data: PNG } }, { inline_data: { mime_type: 'application/pdf', data: PDF } }, { text: 'Describe.' }]);
      gemini.reset();
      await expectUnsupported('claude-via-gemini', toolTurn([{ type: 'text', text: 'x' }]).map((m, i) => (i === 2 ? { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: [imageUrl] }] } : m)), 'body.messages.2.content.0.content.0');
      expect(gemini.requests).to.have.length(0);
    });

    it('refuses images on the offline provider, which reads text only', async () => {
      await expectUnsupported('claude-offline', [{ role: 'user', content: [{ type: 'text', text: 'see' }, image] }], 'body.messages.0.content.1');
    });

    it('returns thinking blocks from Anthropic and sends them back unchanged on the next turn', async () => {
      anthropic.thinking = { text: 'The user wants a greeting.', redacted: 'EncryptedOpaqueData==' };
      const ask: Anthropic.MessageParam = { role: 'user', content: 'Say hello' };
      const first = await client().messages.create({ model: 'claude-via-anthropic', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [ask] });
      expect(first.content).to.deep.equal([
        { type: 'thinking', thinking: 'The user wants a greeting.', signature: fakeSignature('The user wants a greeting.') },
        { type: 'redacted_thinking', data: 'EncryptedOpaqueData==' },
        { type: 'text', text: 'Hello from the fake.' },
      ]);
      expect(lastBody(anthropic).thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
      const history: Anthropic.MessageParam[] = [ask, { role: 'assistant', content: first.content }, { role: 'user', content: 'Again' }];
      await client().messages.create({ model: 'claude-via-anthropic', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: history });
      // The fake refuses a signature it did not issue; here it also must see the blocks byte for byte.
      expect(lastBody(anthropic).messages[1].content).to.deep.equal(first.content);
      // And the check is real: a thinking block altered on the way is refused by the provider.
      const altered = [ask, { role: 'assistant' as const, content: [{ ...first.content[0], thinking: 'something else' } as Anthropic.ThinkingBlockParam, first.content[2] as Anthropic.TextBlockParam] }, { role: 'user' as const, content: 'Again' }];
      const refused = await call(svc.baseUrl, 'POST', '/cli/llm/messages', { model: 'claude-via-anthropic', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: altered }, { 'x-api-key': token });
      expect(refused.status, refused.text).to.equal(502);
      expect(refused.text).to.include('signature');
    });

    it('streams thinking (thinking_delta, signature_delta, redacted) before the text', async () => {
      anthropic.thinking = { text: 'Let me think about it.', redacted: 'Opaque==' };
      const stream = client().messages.stream({ model: 'claude-via-anthropic', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] });
      const thoughts: string[] = [];
      stream.on('thinking', (delta: string) => thoughts.push(delta));
      const message = await stream.finalMessage();
      expect(thoughts.join('')).to.equal('Let me think about it.');
      expect(message.content).to.deep.equal([
        { type: 'thinking', thinking: 'Let me think about it.', signature: fakeSignature('Let me think about it.') },
        { type: 'redacted_thinking', data: 'Opaque==' },
        { type: 'text', text: 'Hello from the fake.' },
      ]);
    });

    it('counts tokens: Anthropic counts its own (only the input side is sent), others are estimated', async () => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [image, { type: 'text', text: 'How many tokens is this?' }] }];
      const counted = await client().messages.countTokens({ model: 'claude-via-anthropic', system: 'be brief', messages });
      const sent = lastBody(anthropic, '/count_tokens');
      expect(Object.keys(sent).sort()).to.deep.equal(['messages', 'model', 'system']);
      expect(sent.model).to.equal('claude-sonnet-4-0');
      expect(counted.input_tokens).to.equal(Math.ceil(JSON.stringify([sent.system, sent.messages, []]).length / 4));

      const raw = await call(svc.baseUrl, 'POST', '/cli/llm/v1/messages/count_tokens', { model: 'claude-via-openai', messages }, { 'x-api-key': token });
      expect(raw.status, raw.text).to.equal(200);
      expect(raw.headers.get('x-llm-token-estimate')).to.equal('true');
      const textOnly = await client().messages.countTokens({ model: 'claude-via-openai', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
      // The image is estimated at 1,600 tokens on top of the text.
      expect(raw.body.input_tokens - textOnly.input_tokens).to.equal(1_600);
      expect(openai.requests, 'an estimate calls no one').to.have.length(0);
    });
  });
}
