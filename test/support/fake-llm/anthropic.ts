import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeLlmServer, type CapturedRequest, type WireFormat } from './server.js';

/** Cache counters are separate from input_tokens in Anthropic's usage. */
export const ANTHROPIC_DEFAULT_USAGE = { input_tokens: 100, output_tokens: 50, cache_creation_input_tokens: 200, cache_read_input_tokens: 700 };

type Block = { type?: string };
const isToolResults = (content: unknown) => Array.isArray(content) && content.some((b: Block) => b?.type === 'tool_result');

/** The scripted tool_use blocks, when the request offers tools and the turn (since the last user text) has had fewer than `toolRounds` tool-calling answers. */
function toolUsesFor(req: CapturedRequest, fake: FakeLlmServer) {
  const messages: Array<{ role?: string; content?: unknown }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user' && !isToolResults(m.content)) lastUser = i;
  });
  const rounds = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b: Block) => b?.type === 'tool_use')).length;
  const offers = Array.isArray(req.body?.tools) && req.body.tools.length > 0;
  return fake.scriptedToolCalls(offers, rounds, 'toolu_fake_').map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input, argumentsText: c.argumentsText }));
}

/** The fake's signature of a thinking text: Anthropic checks the ones it gets back; so does the fake. */
export const fakeSignature = (thinking: string) => `sig_fake_${createHash('sha256').update(thinking).digest('hex').slice(0, 16)}`;

/** The first thinking block whose signature the fake did not issue, as Anthropic's error message. */
function badSignature(req: CapturedRequest): string | null {
  const messages: Array<{ content?: unknown }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
  for (const [m, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [b, block] of (message.content as Array<{ type?: string; thinking?: string; signature?: string }>).entries()) {
      if (block?.type === 'thinking' && block.signature !== fakeSignature(block.thinking ?? '')) return `messages.${m}.content.${b}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return null;
}

/** Thinking blocks to start the answer with, when the fake thinks and the request enables thinking. */
function thinkingFor(req: CapturedRequest, fake: FakeLlmServer) {
  if (!fake.thinking || req.body?.thinking?.type !== 'enabled') return [];
  const thinking: { type: string; thinking?: string; signature?: string; data?: string } = { type: 'thinking', thinking: fake.thinking.text, signature: fakeSignature(fake.thinking.text) };
  return fake.thinking.redacted ? [thinking, { type: 'redacted_thinking', data: fake.thinking.redacted }] : [thinking];
}

/** count_tokens takes only the input side of a request (Anthropic refuses max_tokens, stream…); the count is characters / 4. */
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers']);
function countTokens(req: CapturedRequest, res: ServerResponse, fake: FakeLlmServer) {
  const extra = Object.keys(req.body ?? {}).find((k) => !COUNT_FIELDS.has(k));
  if (extra) return fake.json(res, 400, anthropicWire.errorBody(400, `${extra}: Extra inputs are not permitted`));
  if (!Array.isArray(req.body?.messages)) return fake.json(res, 400, anthropicWire.errorBody(400, 'messages: Field required'));
  fake.json(res, 200, { input_tokens: Math.ceil(JSON.stringify([req.body.system ?? '', req.body.messages, req.body.tools ?? []]).length / 4) });
}

async function messages(req: CapturedRequest, res: ServerResponse, fake: FakeLlmServer) {
  const model = String(req.body?.model ?? 'unknown');
  const usage = { ...ANTHROPIC_DEFAULT_USAGE, ...fake.usage };
  if (typeof req.body?.max_tokens !== 'number') return fake.json(res, 400, anthropicWire.errorBody(400, 'max_tokens: Field required'));
  const invalid = badSignature(req);
  if (invalid) return fake.json(res, 400, anthropicWire.errorBody(400, invalid));
  const thoughts = thinkingFor(req, fake);
  const toolUses = toolUsesFor(req, fake);
  if (toolUses.length > 0 && !req.body?.stream) {
    const content = [{ type: 'text', text: 'Let me use a tool.' }, ...toolUses.map(({ argumentsText: _a, ...block }) => block)];
    return fake.json(res, 200, { id: 'msg_fake', type: 'message', role: 'assistant', model, content, stop_reason: 'tool_use', stop_sequence: null, usage });
  }
  if (toolUses.length > 0) {
    const send = fake.sse(res);
    await send({ type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }, 'message_start');
    await send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    await send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me use a tool.' } }, 'content_block_delta');
    await send({ type: 'content_block_stop', index: 0 }, 'content_block_stop');
    for (const [i, toolUse] of toolUses.entries()) {
      const index = i + 1;
      await send({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolUse.id, name: toolUse.name, input: {} } }, 'content_block_start');
      const args = toolUse.argumentsText;
      const cut = Math.ceil(args.length / 2);
      for (const piece of [args.slice(0, cut), args.slice(cut)]) await send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }, 'content_block_delta');
      await send({ type: 'content_block_stop', index }, 'content_block_stop');
    }
    await send({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta');
    await send({ type: 'message_stop' }, 'message_stop');
    return void res.end();
  }
  if (!req.body?.stream) {
    if (fake.malformed) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"type": "message", "content": [');
    return fake.json(res, 200, {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: [...thoughts, { type: 'text', text: fake.text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage,
    });
  }
  const send = fake.sse(res);
  await send(
    {
      type: 'message_start',
      message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    'message_start',
  );
  // Thinking streams first: the text in thinking_delta pieces, then its signature_delta; redacted thinking whole in its start.
  for (const [index, block] of thoughts.entries()) {
    if (block.type === 'thinking') {
      await send({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start');
      for (const piece of block.thinking!.match(/\S+\s*/g) ?? []) await send({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } }, 'content_block_delta');
      await send({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }, 'content_block_delta');
    } else await send({ type: 'content_block_start', index, content_block: block }, 'content_block_start');
    await send({ type: 'content_block_stop', index }, 'content_block_stop');
  }
  const at = thoughts.length;
  await send({ type: 'content_block_start', index: at, content_block: { type: 'text', text: '' } }, 'content_block_start');
  await send({ type: 'ping' }, 'ping');
  if (fake.malformed) {
    await send('{"type": "content_block_delta", "delta": ', 'content_block_delta');
    return void res.end();
  }
  for (const piece of fake.pieces()) await send({ type: 'content_block_delta', index: at, delta: { type: 'text_delta', text: piece } }, 'content_block_delta');
  await send({ type: 'content_block_stop', index: at }, 'content_block_stop');
  await send({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta');
  await send({ type: 'message_stop' }, 'message_stop');
  res.end();
}

export const anthropicWire: WireFormat = {
  name: 'anthropic',
  checkAuth(req, apiKey) {
    if (req.headers['x-api-key'] !== apiKey) return { status: 401, message: 'invalid x-api-key' };
    if (req.headers['anthropic-version'] !== '2023-06-01') return { status: 400, message: 'anthropic-version: header is required' };
    return null;
  },
  errorBody(status, message) {
    const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status === 401 ? 'authentication_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  },
  async handle(req, res, fake) {
    if (req.method === 'POST' && req.path === '/v1/messages/count_tokens') {
      countTokens(req, res, fake);
      return true;
    }
    if (req.method === 'POST' && req.path === '/v1/messages') {
      await messages(req, res, fake);
      return true;
    }
    if (req.method === 'GET' && req.path === '/v1/models') {
      if (fake.modelsFail) fake.json(res, 500, this.errorBody(500, 'models unavailable'));
      else fake.json(res, 200, { data: fake.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })), has_more: false, first_id: null, last_id: null });
      return true;
    }
    return false;
  },
};

/** Anthropic Messages on 127.0.0.1; point ANTHROPIC_BASE_URL at `fake.url`. */
export async function startFakeAnthropic(): Promise<FakeLlmServer> {
  const fake = await new FakeLlmServer(anthropicWire).start();
  fake.models = ['claude-3-5-haiku-latest', 'claude-sonnet-4-0', 'claude-fake-live'];
  return fake;
}
