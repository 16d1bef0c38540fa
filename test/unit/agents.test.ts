import { expect } from 'chai';
import { turnSseEvents } from '../../api/routes/agents-stream.js';
import { historyWithin, turnMessages } from '../../commands/agents-history.js';
import { argumentProblem, effectiveLimits } from '../../commands/agents-loop.js';
import { agentDecider, agentSessionDecider, evolveAgentSession, initialAgentSessionState, type AgentEvent, type AgentSessionEvent } from '../../domain/agents/index.js';
import { fold } from '../../domain/shared/decider.js';
import { agentsProjector } from '../../projections/agents.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const definition = {
  name: 'Helper', description: '', provider: 'offline', model: 'offline', instructions: 'Be brief.', tools: [], skills: [], memory: null,
  limits: { maxIterations: 8, maxToolCalls: 32, maxTokens: null, timeoutMs: 300_000 }, temperature: null,
};
const agentCreated: AgentEvent = { type: 'AgentCreated', data: { ...definition, agentId: 'a1', ownerId: 'alice', orgId: null, workspaceId: null, at } };
const sessionCreated: AgentSessionEvent = { type: 'AgentSessionCreated', data: { sessionId: 's1', agentId: 'a1', title: null, ownerId: 'alice', orgId: null, workspaceId: null, at } };
const context = { budgetTokens: 1000, estimatedTokens: 0, includedMessageIds: [], droppedMessageIds: [] };
const received = (messageId: string, content = 'hi'): AgentSessionEvent => ({ type: 'AgentMessageReceived', data: { messageId, content, attachments: [], runner: 'r', deadline: at, context, at } });
const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 2 };
const completed = (messageId: string, text: string, finishReason: 'stop' | 'cancelled' = 'stop'): AgentSessionEvent => ({
  type: 'AgentMessageCompleted', data: { messageId, text, finishReason, iterations: 1, toolCalls: 0, usage, cost: 0, error: null, at },
});

describe('agents: deciders', () => {
  const agents = deciderSpec(agentDecider);
  const sessions = deciderSpec(agentSessionDecider);

  it('creates, updates and deletes an agent; a deleted one is not found', () => {
    agents.given([]).when({ type: 'CreateAgent', agentId: 'a1', definition, ownerId: 'alice', orgId: null, workspaceId: null, at }).then([agentCreated]);
    agents.given([agentCreated]).when({ type: 'UpdateAgent', definition: { ...definition, name: 'B' }, at }).then([{ type: 'AgentUpdated', data: { ...definition, name: 'B', at } }]);
    agents.given([agentCreated, { type: 'AgentDeleted', data: { at } }]).when({ type: 'DeleteAgent', at }).thenThrows('AGENT_NOT_FOUND', 'not_found');
  });

  it('a message while a turn runs is SESSION_BUSY with the running message id; after its completion the session takes messages again', () => {
    const cmd = { type: 'ReceiveMessage' as const, messageId: 'm2', content: 'hi', attachments: [], runner: 'r', deadline: at, context, at };
    const err = sessions.given([sessionCreated, received('m1')]).when(cmd).thenThrows('SESSION_BUSY', 'conflict');
    expect((err as unknown as { details: unknown }).details).to.deep.equal({ messageId: 'm1' });
    sessions.given([sessionCreated, received('m1'), completed('m1', 'ok')]).when(cmd).then([received('m2')]);
  });

  it('only the running turn records events; completing twice appends nothing; cancel of a finished message is a no-op', () => {
    const delta: AgentSessionEvent = { type: 'AgentTextDelta', data: { messageId: 'm1', iteration: 1, text: 'he' } };
    sessions.given([sessionCreated, received('m1')]).when({ type: 'RecordTurn', messageId: 'm1', events: [delta as never], at }).then([delta]);
    sessions.given([sessionCreated, received('m1'), completed('m1', 'x')]).when({ type: 'RecordTurn', messageId: 'm1', events: [delta as never], at }).then([]);
    sessions.given([sessionCreated, received('m1'), completed('m1', 'x')]).when({ type: 'CompleteMessage', messageId: 'm1', text: 'y', finishReason: 'interrupted', iterations: 0, toolCalls: 0, usage, cost: 0, error: null, at }).then([]);
    sessions.given([sessionCreated, received('m1'), completed('m1', 'x')]).when({ type: 'RequestCancel', messageId: 'm1', by: 'alice', at }).then([]);
    sessions.given([sessionCreated]).when({ type: 'RequestCancel', messageId: 'nope', by: 'alice', at }).thenThrows('MESSAGE_NOT_FOUND', 'not_found');
  });
});

describe('agents: history from the log', () => {
  it('a turn with a tool step becomes user, assistant(calls), tool results, assistant; a cancelled one keeps its partial text and says so', () => {
    const events: AgentSessionEvent[] = [
      sessionCreated,
      received('m1', 'weather?'),
      { type: 'AgentStepCompleted', data: { messageId: 'm1', iteration: 1, text: '', toolCalls: [{ id: 'c1', name: 'w', input: { city: 'P' } }], usage, cost: 0, model: 'x', llmFinishReason: 'tool_calls', at } },
      { type: 'AgentToolCalled', data: { messageId: 'm1', iteration: 1, toolCallId: 'c1', name: 'w', input: { city: 'P' }, at } },
      { type: 'AgentToolResulted', data: { messageId: 'm1', iteration: 1, toolCallId: 'c1', name: 'w', content: 'sunny', isError: false, skipped: null, durationMs: 1, at } },
      { type: 'AgentStepCompleted', data: { messageId: 'm1', iteration: 2, text: 'It is sunny.', toolCalls: [], usage, cost: 0, model: 'x', llmFinishReason: 'stop', at } },
      completed('m1', 'It is sunny.'),
      received('m2', 'count'),
      { type: 'AgentTextDelta', data: { messageId: 'm2', iteration: 1, text: 'one two' } },
      completed('m2', 'one two', 'cancelled'),
    ];
    const state = fold(evolveAgentSession, initialAgentSessionState, events);
    expect(turnMessages(state.messages[0])).to.deep.equal([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'w', input: { city: 'P' } }] },
      { role: 'user', content: '', toolResults: [{ toolCallId: 'c1', name: 'w', content: 'sunny' }] },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
    expect(turnMessages(state.messages[1])).to.deep.equal([{ role: 'user', content: 'count' }, { role: 'assistant', content: 'one two\n[answer ended early: cancelled]' }]);
    const all = historyWithin(state, 10_000);
    expect(all.includedMessageIds).to.deep.equal(['m1', 'm2']);
    const tight = historyWithin(state, 20);
    expect(tight).to.include.keys('droppedMessageIds');
    expect(tight.droppedMessageIds).to.deep.equal(['m1']);
    expect(tight.includedMessageIds).to.deep.equal(['m2']);
  });

  it('maps session events to named SSE events with the revision as id (an error event before message.completed)', () => {
    expect(turnSseEvents({ type: 'AgentTextDelta', data: { messageId: 'm', iteration: 1, text: 'x' } }, 7, 's')).to.deep.equal([{ event: 'message.delta', id: '7', data: { messageId: 'm', iteration: 1, text: 'x' } }]);
    const failed = { ...completed('m', ''), data: { ...(completed('m', '') as any).data, finishReason: 'error', error: { code: 'PROVIDER_ERROR', message: 'down' } } };
    expect(turnSseEvents(failed, 9, 's').map((e) => [e.event, e.id])).to.deep.equal([['error', null], ['message.completed', '9']]);
    expect(turnSseEvents({ type: 'AgentStepCompleted', data: {} }, 3, 's')).to.deep.equal([]);
  });
});

describe('agents: loop helpers', () => {
  it('clamps limits to their bounds, maxIterations default 8', () => {
    expect(effectiveLimits({}).maxIterations).to.equal(8);
    expect(effectiveLimits({ maxIterations: 0 }).maxIterations).to.equal(1);
    expect(effectiveLimits({ maxIterations: 99 }).maxIterations).to.equal(50);
  });
  it('checks required arguments and top-level types against the schema', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] };
    expect(argumentProblem(schema, { q: 'x', n: 2 })).to.equal(null);
    expect(argumentProblem(schema, {})).to.match(/missing required argument\(s\): q/);
    expect(argumentProblem(schema, { q: 'x', n: 1.5 })).to.match(/n must be of type integer/);
  });
});

describe('agents: projector', () => {
  it('lists agents and sessions with message counts and the running message', async () => {
    await projectionSpec([agentsProjector])
      .given([
        { streamId: 'agent-a1', event: agentCreated },
        { streamId: 'agentsession-s1', event: sessionCreated },
        { streamId: 'agentsession-s1', event: received('m1') },
        { streamId: 'agentsession-s1', event: completed('m1', 'ok') },
        { streamId: 'agentsession-s1', event: received('m2') },
      ])
      .thenDocuments('agent_sessions', [{ _id: 's1', agentId: 'a1', messageCount: 2, running: 'm2', lastFinishReason: 'stop', version: 3 }]);
  });
});
