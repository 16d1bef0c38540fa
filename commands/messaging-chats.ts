import { DomainError } from '../domain/shared/decider.js';
import {
  coveredUnread,
  embeddedGroupIdOf,
  isEmbeddedGroupId,
  notWorking,
  sessionIdOfAddress,
  sessionNotFound,
  type ChatMessage,
} from '../domain/messaging/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { MessagingProvider } from '../ports/messaging-provider.js';
import { ProviderError } from '../ports/messaging-provider.js';
import type { CommandContext } from './handle.js';
import { executeSessionCommand, loadSession, providerRefOf } from './messaging.js';

/** A provider that failed while we asked it to act for a request: 502, the cause in the message. */
export function providerFailure(err: unknown): never {
  if (err instanceof ProviderError) throw new DomainError(err.code, err.message, 'upstream', err.status === null ? undefined : { providerStatus: err.status });
  throw err;
}

async function workingSession(store: EventStore, sessionId: string) {
  const { state } = await loadSession(store, sessionId);
  if (!state.exists || state.deleted) throw sessionNotFound();
  if (state.status !== 'WORKING') throw notWorking(state.status);
  return state;
}

export interface SendInput {
  chatId: string;
  text: string;
  replyTo?: string | null;
}

/**
 * Hands the text to the provider, then records MessageSent (ack PENDING). On the embedded network
 * the `messaging-network` consumer delivers it and moves the ack on; WAHA reports acks by webhook.
 */
export async function sendMessage(store: EventStore, context: CommandContext, provider: MessagingProvider, sessionId: string, input: SendInput, newId: () => string) {
  const state = await workingSession(store, sessionId);
  const self = state.me?.id ?? state.address ?? '';
  const isGroup = state.provider === 'embedded' ? isEmbeddedGroupId(input.chatId) : input.chatId.endsWith('@g.us');
  if (state.provider === 'embedded') {
    if (isGroup && !state.groups[input.chatId]) throw new DomainError('MESSAGING_CHAT_NOT_FOUND', `no group ${input.chatId} in this session`, 'not_found', { field: 'body.chatId' });
    if (!isGroup && sessionIdOfAddress(input.chatId) === null) {
      throw new DomainError('MESSAGING_INVALID_CHAT_ID', 'chatId must be an embedded address (<sessionId>@embedded) or a group id (<id>@g.embedded)', 'invalid', { field: 'body.chatId' });
    }
    if (input.chatId === state.address) throw new DomainError('MESSAGING_INVALID_CHAT_ID', 'a session cannot message itself', 'invalid', { field: 'body.chatId' });
  }
  const sent = await provider.sendText(providerRefOf(state), input, newId, context.now).catch(providerFailure);
  const message: ChatMessage = {
    id: sent.id,
    chatId: input.chatId,
    from: self,
    to: input.chatId,
    text: input.text,
    timestamp: sent.timestamp,
    fromMe: true,
    replyTo: input.replyTo ?? null,
    groupId: isGroup ? input.chatId : null,
  };
  const result = await executeSessionCommand(store, context, sessionId, { type: 'RecordSent', message });
  return { result, message };
}

/** Marks a chat's received messages read (all, or up to one id); the readers' receipts go back to the senders. */
export async function markChatRead(store: EventStore, context: CommandContext, provider: MessagingProvider, sessionId: string, chatId: string, upToMessageId: string | null) {
  const state = await workingSession(store, sessionId);
  const covered = coveredUnread(state, chatId, upToMessageId);
  if (covered.length > 0 && state.provider !== 'embedded') {
    await provider.markRead(providerRefOf(state), { chatId, messageIds: covered.map((m) => m.id) }).catch(providerFailure);
  }
  const result = await executeSessionCommand(store, context, sessionId, { type: 'MarkRead', chatId, upToMessageId });
  return { result, marked: covered.length };
}

/** Creates a group on the embedded network: the creator joins at once, the consumer tells the others. */
export async function createGroup(store: EventStore, context: CommandContext, sessionId: string, input: { name: string; participants: string[] }, newId: () => string) {
  const state = await workingSession(store, sessionId);
  if (state.provider !== 'embedded') {
    throw new DomainError('MESSAGING_PROVIDER_UNSUPPORTED', 'groups are created on the embedded network only; create WAHA groups in WhatsApp', 'conflict');
  }
  input.participants.forEach((p, i) => {
    if (sessionIdOfAddress(p) === null) throw new DomainError('MESSAGING_INVALID_CHAT_ID', `participant ${p} is not an embedded address`, 'invalid', { field: `body.participants.${i}` });
  });
  const participants = [...new Set([state.address!, ...input.participants])];
  const group = { id: embeddedGroupIdOf(newId()), name: input.name, participants };
  const result = await executeSessionCommand(store, context, sessionId, { type: 'JoinGroup', group, createdBy: state.address! });
  return { result, group };
}
