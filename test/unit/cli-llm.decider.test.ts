import { expect } from 'chai';
import {
  PROMPT_EXCERPT_CHARS,
  cliLlmCallsDecider,
  cliLlmSettingsDecider,
  routeModel,
  type CliLlmCallCommand,
  type CliLlmCallEvent,
  type CliLlmSettingsEvent,
} from '../../domain/cli-llm/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';

describe('cli-llm: organization settings decider', () => {
  const spec = deciderSpec(cliLlmSettingsDecider);
  const set: CliLlmSettingsEvent = { type: 'CliLlmOrgSettingsSet', data: { orgId: 'o1', modelMap: { 'claude-*': { provider: 'openai', model: 'gpt-4o' } }, logPrompts: false, setBy: 'u1', at } };

  it('sets the map and keeps what a change does not name; the same settings again record nothing', () => {
    spec.given([]).when({ type: 'SetCliLlmOrgSettings', orgId: 'o1', modelMap: set.data.modelMap, setBy: 'u1', at }).then([set]);
    spec.given([set]).when({ type: 'SetCliLlmOrgSettings', orgId: 'o1', logPrompts: true, setBy: 'u2', at }).then([{ type: 'CliLlmOrgSettingsSet', data: { ...set.data, logPrompts: true, setBy: 'u2' } }]);
    spec.given([set]).when({ type: 'SetCliLlmOrgSettings', orgId: 'o1', modelMap: { 'claude-*': { provider: 'openai', model: 'gpt-4o' } }, setBy: 'u1', at }).then([]);
  });

  it('refuses a "*" anywhere but at the end of a name', () => {
    spec.given([]).when({ type: 'SetCliLlmOrgSettings', orgId: 'o1', modelMap: { 'a*b': { provider: 'offline', model: null } }, setBy: 'u1', at }).thenThrows('INVALID_MODEL_PATTERN', 'invalid');
  });
});

describe('cli-llm: calls decider', () => {
  const spec = deciderSpec(cliLlmCallsDecider);
  const call: CliLlmCallCommand['call'] = {
    callId: 'c1',
    userId: 'u1',
    orgId: null,
    credential: 'cli_token',
    credentialId: 't1',
    requestedModel: 'claude-x',
    provider: 'offline',
    model: 'claude-x',
    routedBy: 'default',
    stream: false,
    messages: 1,
    tools: 0,
    toolCalls: 0,
    outcome: 'completed',
    stopReason: 'stop',
    errorCode: null,
    usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    costUsd: 0,
    priced: true,
    durationMs: 3,
    content: null,
    at,
  };
  const recorded: CliLlmCallEvent = { type: 'CliLlmCallRecorded', data: call };

  it('records a call once (a retried record adds nothing)', () => {
    spec.given([]).when({ type: 'RecordCliLlmCall', call }).then([recorded]);
    spec.given([recorded]).when({ type: 'RecordCliLlmCall', call }).then([]);
  });

  it('cuts logged prompt and answer excerpts so events stay small', () => {
    const long = 'x'.repeat(PROMPT_EXCERPT_CHARS + 50);
    const [event] = cliLlmCallsDecider.decide({ type: 'RecordCliLlmCall', call: { ...call, content: { prompt: long, answer: long } } }, cliLlmCallsDecider.initialState);
    expect(event.data.content?.prompt.length).to.equal(PROMPT_EXCERPT_CHARS);
    expect(event.data.content?.answer.length).to.equal(PROMPT_EXCERPT_CHARS);
  });
});

describe('cli-llm: model routing', () => {
  const organization = { 'claude-opus': { provider: 'anthropic' as const, model: null }, 'claude-*': { provider: 'openai' as const, model: 'gpt-4o' } };
  const service = { 'claude-*': { provider: 'google' as const, model: 'gemini-2.0-flash' }, 'claude-sonnet-*': { provider: 'anthropic' as const, model: 'claude-sonnet-4-0' } };

  it('takes the organization map, then the service map (exact before the longest pattern), then <provider>/<model>, then the default', () => {
    expect(routeModel('claude-opus', { organization, service, defaultRoute: null })).to.deep.equal({ provider: 'anthropic', model: 'claude-opus', routedBy: 'organization' });
    expect(routeModel('claude-haiku', { organization, service, defaultRoute: null })).to.deep.equal({ provider: 'openai', model: 'gpt-4o', routedBy: 'organization' });
    expect(routeModel('claude-sonnet-4', { organization: null, service, defaultRoute: null })).to.deep.equal({ provider: 'anthropic', model: 'claude-sonnet-4-0', routedBy: 'service' });
    expect(routeModel('claude-haiku', { organization: null, service, defaultRoute: null })).to.deep.equal({ provider: 'google', model: 'gemini-2.0-flash', routedBy: 'service' });
    expect(routeModel('openai/gpt-4o-mini', { organization: null, service: {}, defaultRoute: null })).to.deep.equal({ provider: 'openai', model: 'gpt-4o-mini', routedBy: 'explicit' });
    expect(routeModel('x', { organization: null, service: {}, defaultRoute: { provider: 'offline', model: null } })).to.deep.equal({ provider: 'offline', model: 'x', routedBy: 'default' });
    expect(routeModel('nope/x', { organization: null, service: {}, defaultRoute: null })).to.equal(null);
  });
});
