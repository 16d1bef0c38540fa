import { expect } from 'chai';
import { runAgentLoop, type AgentTool, type LoopEvent } from '../../commands/agents-loop.js';
import { createLlmProvider } from '../../infra/llm/registry.js';
import { createOfflineProvider } from '../../infra/llm/offline.js';
import { priceTable } from '../../infra/llm/prices.js';
import type { LlmProvider, LlmProviderId } from '../../ports/llm.js';
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi, type FakeLlmServer } from '../support/fake-llm/index.js';
import { waitUntil } from '../support/wait.js';

/**
 * The tool-calling loop (commands/agents-loop.ts) over each wire format, through the adapters
 * talking real HTTP to the loopback fakes: parallel calls run concurrently, malformed arguments
 * reach the model as an error result, limits end the turn, cancel stops everything in flight.
 */

const subjects: Array<{ id: Exclude<LlmProviderId, 'offline'>; start(): Promise<FakeLlmServer>; baseUrl(f: FakeLlmServer): string; model: string }> = [
  { id: 'openai', start: startFakeOpenAi, baseUrl: (f) => `${f.url}/v1`, model: 'gpt-4o' },
  { id: 'anthropic', start: startFakeAnthropic, baseUrl: (f) => f.url, model: 'claude-sonnet-4-0' },
  { id: 'google', start: startFakeGemini, baseUrl: (f) => f.url, model: 'gemini-2.0-flash' },
];

/** A tool that records its runs and waits `ms` (abortable) before answering. */
function slowTool(name: string, ms: number, log: Array<{ name: string; start: number; end: number | null; aborted: boolean; input: unknown }>): AgentTool {
  return {
    name,
    description: `waits ${ms} ms`,
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    run(input, signal) {
      const entry = { name, start: Date.now(), end: null as number | null, aborted: false, input };
      log.push(entry);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          entry.end = Date.now();
          resolve(`${name}: sunny in ${String(input.city)}`);
        }, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          entry.aborted = true;
          reject(new Error('aborted'));
        }, { once: true });
      });
    },
  };
}

for (const subject of subjects) {
  for (const stream of [false, true]) {
    describe(`tool-calling loop: ${subject.id}${stream ? ' (streamed)' : ''}`, function () {
      this.timeout(20_000);
      let fake: FakeLlmServer;
      let provider: LlmProvider;
      before(async () => {
        fake = await subject.start();
        provider = createLlmProvider(subject.id, { apiKey: 'k', baseUrl: subject.baseUrl(fake), limits: { timeoutMs: 10_000, maxRetries: 0 }, prices: priceTable(undefined) });
      });
      beforeEach(() => fake.reset());
      after(async () => fake?.close());

      it('runs parallel tool calls concurrently and gives every result back to the model', async () => {
        fake.toolCalls = [{ name: 'weather', input: { city: 'Paris' } }, { name: 'weather', input: { city: 'Rome' } }];
        fake.text = 'Both are sunny.';
        const log: Parameters<typeof slowTool>[2] = [];
        const events: LoopEvent[] = [];
        const outcome = await runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'weather?' }], tools: [slowTool('weather', 150, log)], stream, onEvent: (e) => void events.push(e) });
        expect(outcome.finishReason).to.equal('stop');
        expect(outcome.iterations).to.equal(2);
        expect(outcome.toolCalls).to.equal(2);
        expect(outcome.text).to.include('Both are sunny.');
        expect(log.map((l) => (l.input as { city: string }).city)).to.deep.equal(['Paris', 'Rome']);
        // Concurrent: the second started before the first ended.
        expect(log[1].start).to.be.below(log[0].end!);
        const results = events.filter((e) => e.type === 'tool.result');
        expect(results).to.have.length(2);
        // The second request carries both results.
        const second = JSON.stringify(fake.requests[fake.requests.length - 1].body);
        expect(second).to.include('sunny in Paris').and.include('sunny in Rome');
        if (stream) expect(events.some((e) => e.type === 'text.delta')).to.equal(true);
      });

      // Gemini, and Anthropic unstreamed, send arguments as JSON objects: there is no malformed text, only missing arguments.
      const objectsOnWire = subject.id === 'google' || (subject.id === 'anthropic' && !stream);
      it('answers malformed arguments with an error result and lets the model go on', async () => {
        if (objectsOnWire) {
          fake.toolCalls = [{ name: 'weather', input: {} }];
        } else fake.toolCalls = [{ name: 'weather', rawArguments: '{"city": "Par' }];
        const log: Parameters<typeof slowTool>[2] = [];
        const events: LoopEvent[] = [];
        const outcome = await runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'weather?' }], tools: [slowTool('weather', 10, log)], stream, onEvent: (e) => void events.push(e) });
        expect(outcome.finishReason).to.equal('stop');
        expect(log, 'the tool never ran').to.have.length(0);
        const result = events.find((e) => e.type === 'tool.result') as Extract<LoopEvent, { type: 'tool.result' }>;
        expect(result.result).to.include({ isError: true, skipped: 'invalid_arguments' });
        expect(result.result.content).to.match(objectsOnWire ? /missing required argument/ : /not a JSON object/);
      });

      it('stops at maxIterations and at maxToolCalls with the text so far', async () => {
        fake.toolCalls = [{ name: 'weather', input: { city: 'Oslo' } }];
        fake.toolRounds = 100;
        const log: Parameters<typeof slowTool>[2] = [];
        const capped = await runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'loop' }], tools: [slowTool('weather', 1, log)], stream, limits: { maxIterations: 3 } });
        expect(capped.finishReason).to.equal('max_iterations');
        expect(capped.iterations).to.equal(3);
        expect(fake.requests.filter((r) => r.method === 'POST')).to.have.length(3);
        fake.reset();
        fake.toolCalls = [{ name: 'weather', input: { city: 'A' } }, { name: 'weather', input: { city: 'B' } }];
        fake.toolRounds = 100;
        const calls = await runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'loop' }], tools: [slowTool('weather', 1, [])], stream, limits: { maxToolCalls: 3 } });
        expect(calls.finishReason).to.equal('max_tool_calls');
        expect(calls.toolCalls).to.equal(3);
        expect(calls.text).to.not.match(/tool_use|functionCall|tool_calls/);
      });

      it('cancel aborts the tools in flight within 1 s and starts no tool after it', async () => {
        fake.toolCalls = [{ name: 'weather', input: { city: 'A' } }, { name: 'weather', input: { city: 'B' } }, { name: 'weather', input: { city: 'C' } }];
        const log: Parameters<typeof slowTool>[2] = [];
        const controller = new AbortController();
        // At most two at once: the third waits for a slot, which the cancel never gives it.
        const running = runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'go' }], tools: [slowTool('weather', 60_000, log)], stream, signal: controller.signal, limits: { maxConcurrentTools: 2 } });
        await waitUntil('two tools in flight', () => log.length >= 2, 10_000, 5);
        const t0 = Date.now();
        controller.abort();
        const outcome = await running;
        expect(Date.now() - t0).to.be.below(1000);
        expect(outcome.finishReason).to.equal('cancelled');
        expect(log).to.have.length(2);
        expect(log.every((l) => l.aborted)).to.equal(true);
      });

      // Partial text exists only when streamed (agents always stream their model calls).
      if (stream) it('cancel during the model call keeps the partial text', async () => {
        fake.text = 'one two three four five six seven eight nine ten';
        fake.streamDelayMs = 60;
        const controller = new AbortController();
        let deltas = 0;
        const running = runAgentLoop({ provider, model: subject.model, messages: [{ role: 'user', content: 'count' }], tools: [], stream, signal: controller.signal, onEvent: (e) => {
          if (e.type === 'text.delta' && ++deltas === 3) controller.abort();
        } });
        const t0 = Date.now();
        const outcome = await running;
        expect(Date.now() - t0).to.be.below(2000);
        expect(outcome.finishReason).to.equal('cancelled');
        expect(outcome.text).to.match(/^one two/);
        expect(outcome.text.length).to.be.below(fake.text.length);
      });
    });
  }
}

describe('tool-calling loop: offline provider (deterministic tool rule)', () => {
  const provider = createOfflineProvider();
  it('`call <tool> <json>` lines are parallel calls in the first step; the answer is their results', async () => {
    const log: Parameters<typeof slowTool>[2] = [];
    const outcome = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'call weather {"city":"Paris"}\ncall weather {"city":"Rome"}' }], tools: [slowTool('weather', 20, log)] });
    expect(outcome.finishReason).to.equal('stop');
    expect(outcome.text).to.equal('weather: sunny in Paris\nweather: sunny in Rome');
    expect(log).to.have.length(2);
  });
  it('`loop` lines call at every step until a limit; malformed JSON is an invalid_arguments result; unknown tools are plain text', async () => {
    const looped = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'loop weather {"city":"X"}' }], tools: [slowTool('weather', 1, [])], limits: { maxIterations: 4 } });
    expect(looped).to.include({ finishReason: 'max_iterations', iterations: 4, toolCalls: 4 });
    const events: LoopEvent[] = [];
    const bad = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'call weather {"city":' }], tools: [slowTool('weather', 1, [])], onEvent: (e) => void events.push(e) });
    expect(bad.finishReason).to.equal('stop');
    expect(events.some((e) => e.type === 'tool.result' && e.result.skipped === 'invalid_arguments')).to.equal(true);
    const plain = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'call nothing {}' }], tools: [slowTool('weather', 1, [])] });
    expect(plain).to.include({ finishReason: 'stop', text: 'call nothing {}', toolCalls: 0 });
  });
  it('timeout and budget end the turn with their finishReason', async () => {
    const timedOut = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: `slow 200\n${'w '.repeat(20)}` }], tools: [], stream: true, limits: { timeoutMs: 500 } });
    expect(timedOut.finishReason).to.equal('timeout');
    expect(timedOut.text).to.match(/^w w/);
    const budget = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'loop weather {"city":"X"}' }], tools: [slowTool('weather', 1, [])], limits: { budget: 0 } });
    expect(budget.finishReason).to.equal('budget');
    const tokens = await runAgentLoop({ provider, model: 'offline', messages: [{ role: 'user', content: 'loop weather {"city":"X"}' }], tools: [slowTool('weather', 1, [])], limits: { maxTokens: 5 } });
    expect(tokens.finishReason).to.equal('max_tokens');
  });
});
