import { executeSessionCommand, loadSession } from '../commands/messaging.js';
import type { CommandContext } from '../commands/handle.js';
import { sessionIdOfAddress, sessionIdOfStream, MSG_SESSION_CATEGORY, type MessagingEventOf } from '../domain/messaging/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Consumer } from '../ports/bus.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';

export interface MessagingConsumerPorts {
  eventStore: EventStore;
  clock: Clock;
}

/** The messaging context's reactions in the worker role. */
export function messagingConsumers(ports: MessagingConsumerPorts, _workerId: string): Consumer[] {
  return [embeddedNetwork(ports)];
}

/**
 * The embedded network, carried by events so it works across processes and survives restarts:
 * - MessageSent (embedded sender) → ack SERVER on the sender, MessageReceived on each recipient's
 *   stream, then ack DEVICE (ERROR when a direct recipient does not exist or was deleted);
 * - MessagingGroupJoined by the group's creator → the same group joined on each participant;
 * - MessagesMarkedRead → ack READ on each sender's stream (the read receipt).
 * Every command it issues is idempotent in the decider, so a redelivered event changes nothing.
 */
export function embeddedNetwork({ eventStore: store, clock }: MessagingConsumerPorts): Consumer {
  const contextOf = (event: RecordedEvent): CommandContext => ({
    actorId: null,
    orgId: event.metadata.orgId,
    workspaceId: event.metadata.workspaceId,
    correlationId: event.metadata.correlationId,
    causationId: event.id,
    requestId: null,
    now: clock.now(),
  });

  async function deliver(event: RecordedEvent, data: MessagingEventOf<'MessageSent'>['data']) {
    const senderId = sessionIdOfStream(event.streamId);
    const { state: sender } = await loadSession(store, senderId);
    if (sender.provider !== 'embedded') return;
    const context = contextOf(event);
    const m = data.message;
    const group = m.groupId ? sender.groups[m.groupId] : undefined;
    const recipients = group ? group.participants.filter((p) => p !== sender.address) : [m.chatId];
    const live: string[] = [];
    for (const address of recipients) {
      const recipientId = sessionIdOfAddress(address);
      if (!recipientId) continue;
      const { state } = await loadSession(store, recipientId);
      if (state.exists && !state.deleted) live.push(recipientId);
    }
    if (live.length === 0) {
      await executeSessionCommand(store, context, senderId, { type: 'ChangeAck', messageId: m.id, ack: 'ERROR' });
      return;
    }
    await executeSessionCommand(store, context, senderId, { type: 'ChangeAck', messageId: m.id, ack: 'SERVER' });
    for (const recipientId of live) {
      await executeSessionCommand(store, context, recipientId, {
        type: 'RecordReceived',
        message: {
          id: m.id,
          // On the recipient's side a direct chat is named after its peer, a group after itself.
          chatId: group ? group.id : m.from,
          from: m.from,
          to: group ? group.id : `${recipientId}@embedded`,
          text: m.text,
          timestamp: m.timestamp,
          fromMe: false,
          replyTo: m.replyTo ?? null,
          groupId: group ? group.id : null,
        },
      });
    }
    await executeSessionCommand(store, context, senderId, { type: 'ChangeAck', messageId: m.id, ack: 'DEVICE' });
  }

  async function shareGroup(event: RecordedEvent, data: MessagingEventOf<'MessagingGroupJoined'>['data']) {
    const creatorId = sessionIdOfAddress(data.createdBy);
    // Only the creator's own event fans out; the copies it produces do not echo.
    if (creatorId !== sessionIdOfStream(event.streamId)) return;
    for (const participant of data.group.participants) {
      const participantId = sessionIdOfAddress(participant);
      if (!participantId || participantId === creatorId) continue;
      const { state } = await loadSession(store, participantId);
      if (!state.exists || state.deleted) continue;
      await executeSessionCommand(store, contextOf(event), participantId, { type: 'JoinGroup', group: data.group, createdBy: data.createdBy });
    }
  }

  async function sendReceipts(event: RecordedEvent, data: MessagingEventOf<'MessagesMarkedRead'>['data']) {
    for (const message of data.messages) {
      const senderId = sessionIdOfAddress(message.from);
      if (!senderId) continue;
      const { state } = await loadSession(store, senderId);
      if (!state.exists) continue;
      await executeSessionCommand(store, contextOf(event), senderId, { type: 'ChangeAck', messageId: message.id, ack: 'READ' });
    }
  }

  return {
    name: 'messaging-network',
    categories: [MSG_SESSION_CATEGORY],
    async handle(event) {
      switch (event.type) {
        case 'MessageSent':
          return deliver(event, event.data as MessagingEventOf<'MessageSent'>['data']);
        case 'MessagingGroupJoined':
          return shareGroup(event, event.data as MessagingEventOf<'MessagingGroupJoined'>['data']);
        case 'MessagesMarkedRead':
          return sendReceipts(event, event.data as MessagingEventOf<'MessagesMarkedRead'>['data']);
        default:
          return;
      }
    },
  };
}
