import type { ServerResponse } from 'node:http';
import { FakeLlmServer, type CapturedRequest, type WireFormat } from './server.js';

/** cachedContentTokenCount is a subset of promptTokenCount. */
export const GEMINI_DEFAULT_USAGE = { promptTokenCount: 120, candidatesTokenCount: 30, totalTokenCount: 150, cachedContentTokenCount: 20 };

const MODEL_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

type Part = { functionResponse?: unknown; functionCall?: unknown };

/** The scripted function calls, when the request offers tools and the turn (since the last user text) has had fewer than `toolRounds` calling answers. */
function functionCallsFor(req: CapturedRequest, fake: FakeLlmServer) {
  const contents: Array<{ role?: string; parts?: Part[] }> = Array.isArray(req.body?.contents) ? req.body.contents : [];
  let lastUser = -1;
  contents.forEach((c, i) => {
    if (c.role !== 'model' && !(c.parts ?? []).some((p) => p?.functionResponse !== undefined)) lastUser = i;
  });
  const rounds = contents.slice(lastUser + 1).filter((c) => c.role === 'model' && (c.parts ?? []).some((p) => p?.functionCall !== undefined)).length;
  const offers = Array.isArray(req.body?.tools) && req.body.tools.length > 0;
  // Like Gemini without ids: each call is known by its name.
  return fake.scriptedToolCalls(offers, rounds, '').map((c) => ({ functionCall: { name: c.name, args: c.input } }));
}

async function generate(req: CapturedRequest, res: ServerResponse, fake: FakeLlmServer, model: string, stream: boolean) {
  const usage = { ...GEMINI_DEFAULT_USAGE, ...fake.usage };
  const candidate = (text: string, finishReason?: string) => ({ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finishReason && { finishReason }) });
  const calls = functionCallsFor(req, fake);
  if (calls.length > 0) {
    const answer = { candidates: [{ content: { role: 'model', parts: calls }, index: 0, finishReason: 'STOP' }], usageMetadata: usage, modelVersion: model };
    if (!stream) return fake.json(res, 200, answer);
    const send = fake.sse(res);
    await send(answer);
    return void res.end();
  }
  if (!stream) {
    if (fake.malformed) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"candidates": [{"content": ');
    return fake.json(res, 200, { candidates: [candidate(fake.text, 'STOP')], usageMetadata: usage, modelVersion: model });
  }
  if (req.query.get('alt') !== 'sse') return fake.json(res, 400, geminiWire.errorBody(400, 'this fake only streams with alt=sse'));
  const send = fake.sse(res);
  if (fake.malformed) {
    await send('{"candidates": [');
    return void res.end();
  }
  const pieces = fake.pieces();
  for (const [i, piece] of pieces.entries()) {
    const last = i === pieces.length - 1;
    // Like Gemini: usage grows chunk by chunk; the last one is the whole call's.
    const partial = { promptTokenCount: usage.promptTokenCount, candidatesTokenCount: i + 1, totalTokenCount: usage.promptTokenCount + i + 1 };
    await send({ candidates: [candidate(piece, last ? 'STOP' : undefined)], usageMetadata: last ? usage : partial, modelVersion: model });
  }
  res.end();
}

export const geminiWire: WireFormat = {
  name: 'gemini',
  checkAuth(req, apiKey) {
    return req.headers['x-goog-api-key'] === apiKey ? null : { status: 400, message: 'API key not valid. Please pass a valid API key.' };
  },
  errorBody(status, message) {
    const statusName = status === 429 ? 'RESOURCE_EXHAUSTED' : status === 400 ? 'INVALID_ARGUMENT' : status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
    return { error: { code: status, message, status: statusName } };
  },
  async handle(req, res, fake) {
    const match = req.method === 'POST' ? MODEL_PATH.exec(req.path) : null;
    if (match) {
      await generate(req, res, fake, decodeURIComponent(match[1]), match[2] === 'streamGenerateContent');
      return true;
    }
    if (req.method === 'GET' && req.path === '/v1beta/models') {
      if (fake.modelsFail) fake.json(res, 500, this.errorBody(500, 'models unavailable'));
      else
        fake.json(res, 200, {
          models: [
            ...fake.models.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent', 'countTokens'] })),
            { name: 'models/text-embedding-004', displayName: 'embedding', supportedGenerationMethods: ['embedContent'] },
          ],
        });
      return true;
    }
    return false;
  },
};

/** Gemini generateContent on 127.0.0.1; point GEMINI_BASE_URL at `fake.url`. */
export async function startFakeGemini(): Promise<FakeLlmServer> {
  const fake = await new FakeLlmServer(geminiWire).start();
  fake.models = ['gemini-2.0-flash', 'gemini-1.5-pro', 'gemini-fake-live'];
  return fake;
}
