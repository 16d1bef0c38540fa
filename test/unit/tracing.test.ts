import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../infra/config/index.js';
import { encodeEvent } from '../../infra/bus/kafka-topics.js';
import { requestAttributes, resultAttributes } from '../../infra/telemetry/llm.js';
import { samplerOf, tracingWanted } from '../../infra/telemetry/tracing.js';
import { currentTraceparent, inSpan, injectTraceHeaders, tracingEnabled, withTraceparent } from '../../lib/tracing.js';
import type { LlmRequest, LlmResult } from '../../ports/llm.js';

/**
 * Tracing's pieces that need no collector (test/integration/tracing.test.ts checks the whole against
 * a real one): when it is on, what a sampler name gives, what an LLM span may hold, the Kafka header.
 * The SDK is not registered here: these tests share a process with the rest of the suite.
 */
describe('tracing', () => {
  it('is on only with an OTLP endpoint, and neither disabled nor exporter none', () => {
    expect(tracingWanted({})).to.equal(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).to.equal(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).to.equal(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).to.equal(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).to.equal(false);
  });

  it('names the sampler the variables ask for (parent-based always-on by default)', () => {
    expect(samplerOf({}).toString()).to.match(/ParentBased\{root=AlwaysOnSampler/);
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).to.equal('AlwaysOffSampler');
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 0.25 }).toString()).to.equal('TraceIdRatioBased{0.25}');
    expect(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0.5 }).toString()).to.match(/ParentBased\{root=TraceIdRatioBased\{0.5\}/);
  });

  it('refuses grpc and bad values at start, naming the variable', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).to.include('OTEL_EXPORTER_OTLP_PROTOCOL');
    expect(refused({ OTEL_TRACES_SAMPLER: 'sometimes' })).to.include('OTEL_TRACES_SAMPLER');
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: '2' })).to.include('OTEL_TRACES_SAMPLER_ARG');
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).to.include('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).OTEL_EXPORTER_OTLP_PROTOCOL).to.equal('http/json');
  });

  it('costs nothing while off: no span, no traceparent, headers and metadata untouched', async () => {
    expect(tracingEnabled()).to.equal(false);
    expect(await inSpan('x', {}, async (span) => span)).to.equal(undefined);
    expect(currentTraceparent()).to.equal(undefined);
    expect(injectTraceHeaders({ a: '1' })).to.deep.equal({ a: '1' });
    expect(withTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', () => currentTraceparent())).to.equal(undefined);
  });

  const request: LlmRequest = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'my card is 4111 1111 1111 1111' },
    ],
    temperature: 0.2,
    maxTokens: 100,
  };
  const result = {
    text: 'noted',
    usage: { promptTokens: 12, completionTokens: 3, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 15 },
    cost: 0.0001,
    priced: true,
    model: 'gpt-4o-2024-08-06',
    provider: 'openai',
    finishReason: 'stop',
  } as LlmResult;

  it('an LLM span has the GenAI attributes, and the prompt and completion only when content is allowed', () => {
    const without = { ...requestAttributes('openai', { orgId: 'o1' }, request, false), ...resultAttributes(result, false) };
    expect(without).to.include({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.request.max_tokens': 100,
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'flows.org.id': 'o1',
    });
    expect(JSON.stringify(without)).to.not.include('4111');
    expect(JSON.stringify(without)).to.not.include('terse');
    const withContent = { ...requestAttributes('google', { orgId: 'o1' }, request, true), ...resultAttributes(result, true) };
    expect(withContent['gen_ai.provider.name']).to.equal('gcp.gemini');
    expect(JSON.parse(String(withContent['gen_ai.system_instructions']))).to.deep.equal([{ type: 'text', content: 'You are terse.' }]);
    expect(JSON.parse(String(withContent['gen_ai.input.messages']))).to.deep.equal([{ role: 'user', parts: [{ type: 'text', content: 'my card is 4111 1111 1111 1111' }] }]);
    expect(JSON.parse(String(withContent['gen_ai.output.messages']))[0]).to.deep.include({ role: 'assistant', finish_reason: 'stop' });
  });

  it('puts an event’s traceparent in its Kafka headers, and nothing when it has none', () => {
    const event = { id: 'e1', type: 'T', streamId: 's-1', revision: 0, position: 7, schemaVersion: 1, data: {}, metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: '2026-01-01T00:00:00.000Z' } };
    expect(encodeEvent(event).headers).to.not.have.property('traceparent');
    const traced = { ...event, metadata: { ...event.metadata, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
    expect(encodeEvent(traced).headers).to.include({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
  });
});
