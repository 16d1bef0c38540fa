import { expect } from 'chai';
import { extensionChatDecider, extensionSettingsDecider, titleFromMessages, type ExtensionChatEvent } from '../../domain/extension/index.js';
import { extensionChatsProjector } from '../../projections/extension.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const limits = { maxMessages: 50 };
const msg = (content: string, role: 'user' | 'assistant' | 'system' = 'user') => ({ role, content, createdAt: null });
const created: ExtensionChatEvent = {
  type: 'ExtensionChatCreated',
  data: { chatId: 'c1', ownerId: 'u1', orgId: null, workspaceId: null, source: 'web-extension', title: 'New chat', messages: [], at },
};
const replaced: ExtensionChatEvent = { type: 'ExtensionChatMessagesReplaced', data: { version: 2, messages: [msg('hello there world')], by: 'u1', at: later } };

describe('extension chats: decider', () => {
  const spec = deciderSpec(extensionChatDecider);

  it('creates with the default title, refuses a second creation and more messages than the limit', () => {
    spec.given([]).when({ type: 'CreateChat', chatId: 'c1', ownerId: 'u1', orgId: null, workspaceId: null, title: null, messages: [], limits, at }).then([created]);
    spec.given([created]).when({ type: 'CreateChat', chatId: 'c1', ownerId: 'u1', orgId: null, workspaceId: null, title: null, messages: [], limits, at }).thenThrows('CHAT_EXISTS', 'conflict');
    const many = Array.from({ length: 51 }, (_, i) => msg(`m${i}`));
    const err = spec.given([]).when({ type: 'CreateChat', chatId: 'c1', ownerId: 'u1', orgId: null, workspaceId: null, title: null, messages: many, limits, at }).thenThrows('TOO_MANY_MESSAGES', 'invalid');
    expect(err.details).to.deep.include({ count: 51, max: 50, field: 'body.messages' });
  });

  it('numbers each replacement; 50 messages pass, 51 are refused', () => {
    spec.given([created]).when({ type: 'ReplaceMessages', messages: [msg('hello there world')], limits, by: 'u1', at: later }).then([replaced]);
    const fifty = Array.from({ length: 50 }, (_, i) => msg(`m${i}`));
    const events = spec.given([created, replaced]).when({ type: 'ReplaceMessages', messages: fifty, limits, by: 'u1', at }).events();
    expect(events[0]!.data).to.deep.include({ version: 3 });
    spec.given([created]).when({ type: 'ReplaceMessages', messages: [...fifty, msg('x')], limits, by: 'u1', at }).thenThrows('TOO_MANY_MESSAGES', 'invalid');
  });

  it('records a generated title only while the title is the default; a rename wins', () => {
    const gen = { type: 'RecordGeneratedTitle' as const, title: 'hello there world', provider: 'offline', model: 'first-words', fromVersion: 2, at: later };
    spec.given([created, replaced]).when(gen).then([{ type: 'ExtensionChatTitleGenerated', data: { title: 'hello there world', provider: 'offline', model: 'first-words', fromVersion: 2, at: later } }]);
    const renamed: ExtensionChatEvent = { type: 'ExtensionChatRenamed', data: { title: 'Mine', by: 'u1', at } };
    spec.given([created, renamed, replaced]).when(gen).then([]);
    expect(spec.stateOf([created, renamed]).titleIsDefault).to.equal(false);
  });

  it('a deleted or missing chat is not found', () => {
    const deleted: ExtensionChatEvent = { type: 'ExtensionChatDeleted', data: { by: 'u1', at } };
    spec.given([created, deleted]).when({ type: 'RenameChat', title: 'x', by: 'u1', at }).thenThrows('CHAT_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'DeleteChat', by: 'u1', at }).thenThrows('CHAT_NOT_FOUND', 'not_found');
  });

  it('titles from the first words of the first user message', () => {
    expect(titleFromMessages([msg('be brief', 'system'), msg('  Plan   a weekend trip to the mountains now ')])).to.equal('Plan a weekend trip to the');
    expect(titleFromMessages([msg('only assistant', 'assistant')])).to.equal(null);
    expect(titleFromMessages([msg('x'.repeat(100))])).to.have.length(60);
  });
});

describe('extension chats: projector', () => {
  it('projects chats with their version and title, a deletion as a tombstone, also after a redelivery', async () => {
    await projectionSpec([extensionChatsProjector])
      .given([
        { streamId: 'extchat-c1', event: created },
        { streamId: 'extchat-c1', event: replaced },
        { streamId: 'extchat-c1', event: { type: 'ExtensionChatTitleGenerated', data: { title: 'hello there world', provider: 'offline', model: 'first-words', fromVersion: 2, at: later } } },
        { streamId: 'extchat-c2', event: { ...created, data: { ...created.data, chatId: 'c2' } } },
        { streamId: 'extchat-c2', event: { type: 'ExtensionChatDeleted', data: { by: 'u1', at: later } } },
      ])
      .thenDocuments('extension_chats', [
        { _id: 'c1', title: 'hello there world', messageVersion: 2, messageCount: 1, deleted: false, messages: [msg('hello there world')] },
        { _id: 'c2', deleted: true, messageCount: 0 },
      ]);
  });
});

describe('extension settings: decider', () => {
  const spec = deciderSpec(extensionSettingsDecider);
  it('records a change with who, refuses a default outside the allowed list, and a repeat is no event', () => {
    const command = { type: 'UpdateExtensionSettings' as const, orgId: 'o1', defaultModel: 'offline:offline', allowedModels: ['offline:offline', 'offline:offline', 'openai:gpt-4o'], by: 'u1', at };
    const [event] = spec.given([]).when(command).then([{ type: 'ExtensionSettingsUpdated', data: { orgId: 'o1', defaultModel: 'offline:offline', allowedModels: ['offline:offline', 'openai:gpt-4o'], by: 'u1', at } }]);
    spec.given([event!]).when(command).then([]);
    spec.given([]).when({ ...command, defaultModel: 'openai:gpt-4o-mini' }).thenThrows('DEFAULT_MODEL_NOT_ALLOWED', 'invalid');
  });
});
