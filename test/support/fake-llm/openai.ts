import type { ServerResponse } from 'node:http';
import { FakeLlmServer, type CapturedRequest, type WireFormat } from './server.js';

/** The usage the fake reports unless a test overrides fields: 400 of the 1000 prompt tokens were cached. */
export const OPENAI_DEFAULT_USAGE = { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, cached_tokens: 400 };
/** The fake answers with a dated snapshot of the model asked for, as OpenAI does. */
export const openAiSnapshot = (model: string) => `${model}-2024-08-06`;

function usageOf(fake: FakeLlmServer) {
  const u = { ...OPENAI_DEFAULT_USAGE, ...fake.usage };
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens, prompt_tokens_details: { cached_tokens: u.cached_tokens } };
}

/** The scripted tool calls, when the request offers tools and the turn (since the last user message) has had fewer than `toolRounds` tool-calling answers. */
function toolCallsFor(req: CapturedRequest, fake: FakeLlmServer) {
  const messages: Array<{ role?: string; tool_calls?: unknown[] }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const rounds = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0).length;
  const offers = Array.isArray(req.body?.tools) && req.body.tools.length > 0;
  return fake.scriptedToolCalls(offers, rounds, 'call_fake_').map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.argumentsText } }));
}

async function chat(req: CapturedRequest, res: ServerResponse, fake: FakeLlmServer) {
  const model = openAiSnapshot(String(req.body?.model ?? 'unknown'));
  const calls = toolCallsFor(req, fake);
  if (calls.length > 0 && !req.body?.stream) {
    return fake.json(res, 200, {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls, refusal: null }, logprobs: null, finish_reason: 'tool_calls' }],
      usage: usageOf(fake),
    });
  }
  if (calls.length > 0) {
    const send = fake.sse(res);
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model };
    for (const [index, call] of calls.entries()) {
      await send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, finish_reason: null }] });
      // Arguments arrive in pieces, as OpenAI sends them.
      const args = call.function.arguments;
      const cut = Math.ceil(args.length / 2);
      for (const piece of [args.slice(0, cut), args.slice(cut)]) await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }] });
    }
    await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    if (req.body?.stream_options?.include_usage) await send({ ...base, choices: [], usage: usageOf(fake) });
    await send('[DONE]');
    return void res.end();
  }
  if (!req.body?.stream) {
    if (fake.malformed) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "chatcmpl-1", "choices": [{"message": ');
    return fake.json(res, 200, {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: fake.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: usageOf(fake),
    });
  }
  const send = fake.sse(res);
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  await send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], usage: null });
  if (fake.malformed) {
    await send('{"choices": [ {"delta": ');
    return void res.end();
  }
  for (const piece of fake.pieces()) await send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }], usage: null });
  await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null });
  // With stream_options.include_usage the usage comes last, in a chunk with no choices.
  if (req.body?.stream_options?.include_usage) await send({ ...base, choices: [], usage: usageOf(fake) });
  await send('[DONE]');
  res.end();
}

export const openAiWire: WireFormat = {
  name: 'openai',
  checkAuth(req, apiKey) {
    return req.headers.authorization === `Bearer ${apiKey}` ? null : { status: 401, message: 'Incorrect API key provided' };
  },
  errorBody(status, message) {
    return { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', param: null, code: null } };
  },
  async handle(req, res, fake) {
    if (req.method === 'POST' && req.path === '/v1/chat/completions') {
      await chat(req, res, fake);
      return true;
    }
    if (req.method === 'GET' && req.path === '/v1/models') {
      if (fake.modelsFail) fake.json(res, 500, this.errorBody(500, 'models unavailable'));
      else fake.json(res, 200, { object: 'list', data: fake.models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) });
      return true;
    }
    return false;
  },
};

/** OpenAI Chat Completions on 127.0.0.1; point OPENAI_BASE_URL at `${fake.url}/v1`. */
export async function startFakeOpenAi(): Promise<FakeLlmServer> {
  const fake = await new FakeLlmServer(openAiWire).start();
  fake.models = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'fake-live-model'];
  return fake;
}
