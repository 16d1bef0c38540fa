import { expect } from 'chai';
import { historyMessages } from '../../commands/assistant.js';
import { explainRunError } from '../../commands/assistant-tools.js';
import { conversationDecider, type AssistantEvent } from '../../domain/assistant/index.js';
import { assistantProjector } from '../../projections/assistant.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:00:05.000Z';
const alice = { userId: 'alice', orgId: null, workspaceId: null };
const zero = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
const created: AssistantEvent = { type: 'ConversationCreated', data: { conversationId: 'c1', userId: 'alice', orgId: null, workspaceId: null, title: 'New', at } };
const sent: AssistantEvent = { type: 'UserMessageSent', data: { messageId: 'm1', replyId: 'r1', content: 'hi', provider: 'offline', model: 'offline', at } };
const completed: AssistantEvent = {
  type: 'GenerationCompleted',
  data: { replyId: 'r1', content: 'hello', finishReason: 'stop', iterations: 1, toolCalls: 0, usage: zero, cost: 0, error: null, at: later },
};

describe('assistant: decider', () => {
  const spec = deciderSpec(conversationDecider);

  it('a message starts a reply; another one while it runs is 409 CONVERSATION_BUSY naming the running message', () => {
    spec.given([created]).when({ type: 'SendMessage', scope: alice, messageId: 'm1', replyId: 'r1', content: 'hi', provider: 'offline', model: 'offline', at }).then([sent]);
    const err = spec.given([created, sent]).when({ type: 'SendMessage', scope: alice, messageId: 'm2', replyId: 'r2', content: 'again', provider: 'offline', model: 'offline', at }).thenThrows('CONVERSATION_BUSY', 'conflict');
    expect(err.details).to.deep.equal({ runningMessageId: 'r1' });
    const next = spec.given([created, sent, completed]).when({ type: 'SendMessage', scope: alice, messageId: 'm2', replyId: 'r2', content: 'again', provider: 'offline', model: 'offline', at }).events();
    expect(next.map((x) => x.type)).to.deep.equal(['UserMessageSent']);
  });

  it("another user's conversation and a deleted one are 404", () => {
    spec.given([created]).when({ type: 'RenameConversation', scope: { ...alice, userId: 'bob' }, title: 'x', at }).thenThrows('CONVERSATION_NOT_FOUND', 'not_found');
    spec.given([created]).when({ type: 'RenameConversation', scope: { userId: 'alice', orgId: 'o1', workspaceId: 'w1' }, title: 'x', at }).thenThrows('CONVERSATION_NOT_FOUND', 'not_found');
    spec.given([created, { type: 'ConversationDeleted', data: { at } }]).when({ type: 'RequestCancel', scope: alice, at }).thenThrows('CONVERSATION_NOT_FOUND', 'not_found');
  });

  it('cancel: requested once, recorded with the partial answer; late records of the reply change nothing', () => {
    spec.given([created, sent]).when({ type: 'RequestCancel', scope: alice, at }).then([{ type: 'GenerationCancelRequested', data: { replyId: 'r1', at } }]);
    spec.given([created, sent, { type: 'GenerationCancelRequested', data: { replyId: 'r1', at } }]).when({ type: 'RequestCancel', scope: alice, at }).then([]);
    spec.given([created]).when({ type: 'RequestCancel', scope: alice, at }).then([]);
    const cancelled: AssistantEvent = { type: 'GenerationCancelled', data: { replyId: 'r1', content: 'hel', usage: zero, cost: 0, at: later } };
    spec.given([created, sent]).when({ type: 'CancelGeneration', replyId: 'r1', content: 'hel', usage: zero, cost: 0, at: later }).then([cancelled]);
    const state = spec.stateOf([created, sent, cancelled]);
    expect(state.running).to.equal(null);
    expect(state.messages[1]).to.include({ status: 'cancelled', content: 'hel' });
    // After the cancel: the loop's own completion and tool records are refused silently.
    spec.given([created, sent, cancelled]).when({ type: 'CompleteGeneration', replyId: 'r1', content: 'hello', finishReason: 'stop', iterations: 1, toolCalls: 0, usage: zero, cost: 0, error: null, at }).then([]);
    spec.given([created, sent, cancelled]).when({ type: 'RecordToolCall', replyId: 'r1', toolCallId: 't', name: 'x', input: {}, iteration: 1, at }).then([]);
  });

  it('feedback: set, change, withdraw with null; only on assistant messages', () => {
    const done = [created, sent, completed];
    spec.given(done).when({ type: 'GiveFeedback', scope: alice, messageId: 'r1', rating: 'like', comment: 'good', at }).then([{ type: 'MessageFeedbackGiven', data: { messageId: 'r1', rating: 'like', comment: 'good', at } }]);
    const liked: AssistantEvent = { type: 'MessageFeedbackGiven', data: { messageId: 'r1', rating: 'like', comment: 'good', at } };
    spec.given([...done, liked]).when({ type: 'GiveFeedback', scope: alice, messageId: 'r1', rating: 'like', comment: 'good', at }).then([]);
    spec.given([...done, liked]).when({ type: 'GiveFeedback', scope: alice, messageId: 'r1', rating: null, comment: 'ignored', at }).then([{ type: 'MessageFeedbackGiven', data: { messageId: 'r1', rating: null, comment: null, at } }]);
    spec.given(done).when({ type: 'GiveFeedback', scope: alice, messageId: 'r1', rating: null, comment: null, at }).then([]);
    spec.given(done).when({ type: 'GiveFeedback', scope: alice, messageId: 'm1', rating: 'like', comment: null, at }).thenThrows('FEEDBACK_ON_USER_MESSAGE', 'invalid');
    spec.given(done).when({ type: 'GiveFeedback', scope: alice, messageId: 'zz', rating: 'like', comment: null, at }).thenThrows('MESSAGE_NOT_FOUND', 'not_found');
  });

  it('the model sees the newest finished messages of the history', () => {
    const state = spec.stateOf([created, sent, completed, { type: 'UserMessageSent', data: { messageId: 'm2', replyId: 'r2', content: 'more', provider: 'offline', model: 'offline', at } }]);
    expect(historyMessages(state, 10)).to.deep.equal({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'more' }], dropped: 0 });
    expect(historyMessages(state, 1)).to.deep.equal({ messages: [{ role: 'user', content: 'more' }], dropped: 2 });
  });

  it('explains run errors by code', () => {
    expect(explainRunError('PROVIDER_NOT_CONFIGURED')).to.contain('credentials');
    expect(explainRunError('WEBHOOK_HTTP_404')).to.contain('HTTP 404');
    expect(explainRunError('SOMETHING_ELSE')).to.be.a('string');
  });
});

describe('assistant: projection', () => {
  const e = (event: AssistantEvent) => ({ streamId: 'assistantconv-c1', event });
  const events = [
    e(created),
    e({ type: 'ConversationRenamed', data: { title: 'Flows', at } }),
    e(sent),
    e({ type: 'AssistantToolCalled', data: { replyId: 'r1', toolCallId: 't1', name: 'list_flows', input: {}, iteration: 1, at } }),
    e({ type: 'AssistantToolResulted', data: { replyId: 'r1', toolCallId: 't1', name: 'list_flows', content: '[]', isError: false, iteration: 1, at } }),
    e(completed),
    e({ type: 'MessageFeedbackGiven', data: { messageId: 'r1', rating: 'dislike', comment: 'meh', at } }),
  ];

  it('projects the conversation and its messages with tool steps and feedback (also after a redelivery)', async () => {
    await projectionSpec([assistantProjector]).given(events).thenDocuments('assistant_conversations', [{ _id: 'c1', title: 'Flows', messageCount: 2, running: null, deleted: false, userId: 'alice' }]);
    await projectionSpec([assistantProjector]).given(events).thenDocuments('assistant_messages', [
      { _id: 'm1', role: 'user', content: 'hi', seq: 4, conversationId: 'c1' },
      {
        _id: 'r1', role: 'assistant', content: 'hello', status: 'completed', seq: 5, replyTo: 'm1', feedback: { rating: 'dislike', comment: 'meh', at },
        tools: [{ toolCallId: 't1', name: 'list_flows', input: {}, iteration: 1, result: { content: '[]', isError: false } }],
      },
    ]);
  });
});
