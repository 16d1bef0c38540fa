import { isVisibleTo, type FlowScope } from '../domain/flows/index.js';
import { MSG_SESSION_CATEGORY, sessionIdOfStream, type Ack, type MessagingEvent, type ProviderKind, type SessionStatus } from '../domain/messaging/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Doc, Page, ReadStore } from '../ports/read-store.js';
import { projectChatsAndMessages, CHATS, GROUPS, MESSAGES } from './messaging-chats.js';
import type { Projector } from './projector.js';

export { listChats, listMessages, listGroups, getMessage, type ChatView, type MessageView, type GroupView } from './messaging-chats.js';

export const SESSIONS = 'messaging_sessions';

export interface MessagingSessionView extends Doc {
  id: string;
  name: string;
  provider: ProviderKind;
  status: SessionStatus;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  deleted: boolean;
  address: string | null;
  providerSessionName: string | null;
  me: { id: string; pushName?: string } | null;
  qr: string | null;
  reason: string | null;
  lastChangeAt: string;
  createdAt: string;
  version: number;
}

/** Sessions, chats, messages and groups of the messaging context, all from the `msgsession` streams. */
export const messagingProjector: Projector = {
  name: 'messaging',
  categories: [MSG_SESSION_CATEGORY],
  collections: [SESSIONS, CHATS, MESSAGES, GROUPS],
  async setup(store) {
    await store.collection(SESSIONS).createIndex({ keys: { ownerId: 1, createdAt: -1 } });
    await store.collection(SESSIONS).createIndex({ keys: { orgId: 1, workspaceId: 1, createdAt: -1 } });
    await store.collection(CHATS).createIndex({ keys: { sessionId: 1, lastMessageAt: -1 } });
    await store.collection(MESSAGES).createIndex({ keys: { sessionId: 1, chatId: 1, seq: -1 } });
    await store.collection(GROUPS).createIndex({ keys: { sessionId: 1, name: 1 } });
  },
  async project(recorded, store) {
    const event = recorded as RecordedEvent & MessagingEvent;
    const sessionId = sessionIdOfStream(recorded.streamId);
    const sessions = store.collection<MessagingSessionView>(SESSIONS);
    switch (event.type) {
      case 'MessagingSessionInitialized': {
        const d = event.data;
        await sessions.replaceOne(
          { _id: sessionId },
          {
            _id: sessionId,
            id: sessionId,
            name: d.name,
            provider: d.provider,
            status: 'STOPPED',
            ownerId: d.ownerId,
            orgId: d.orgId,
            workspaceId: d.workspaceId,
            deleted: false,
            address: d.address ?? null,
            providerSessionName: d.providerSessionName ?? null,
            me: null,
            qr: null,
            reason: null,
            lastChangeAt: d.at,
            createdAt: d.at,
            version: recorded.revision,
          },
          { upsert: true },
        );
        return;
      }
      case 'MessagingSessionStatusChanged': {
        const d = event.data;
        const set: Record<string, unknown> = {
          status: d.status,
          reason: d.reason ?? null,
          // The QR is only meaningful while the provider waits for a scan.
          qr: d.status === 'SCAN_QR_CODE' ? (d.qr ?? null) : null,
          lastChangeAt: d.at,
          version: recorded.revision,
        };
        if (d.me) set.me = d.me;
        await sessions.updateOne({ _id: sessionId, version: { $lt: recorded.revision } }, { $set: set });
        return;
      }
      case 'MessagingSessionDeleted':
        await sessions.updateOne({ _id: sessionId, version: { $lt: recorded.revision } }, { $set: { deleted: true, lastChangeAt: event.data.at, version: recorded.revision } });
        return;
      default:
        await projectChatsAndMessages(recorded, event, sessionId, store);
    }
  },
};

export const messagingProjectors: Projector[] = [messagingProjector];

/**
 * The session as the read model has it, or null when it does not exist, was deleted, or belongs to
 * another tenant (indistinguishable from missing: 404, never 403). Tenancy as for flows.
 */
export async function findMessagingSession(store: ReadStore, sessionId: string, scope: FlowScope): Promise<MessagingSessionView | null> {
  const doc = await store.collection<MessagingSessionView>(SESSIONS).findOne({ _id: sessionId });
  if (!doc || doc.deleted) return null;
  if (!isVisibleTo(doc, scope)) return null;
  return doc;
}

/** Any session by id, deleted or not, for system callers (the provider inbound route, consumers). */
export function getMessagingSessionAnyTenant(store: ReadStore, sessionId: string): Promise<MessagingSessionView | null> {
  return store.collection<MessagingSessionView>(SESSIONS).findOne({ _id: sessionId });
}

/** The sessions visible in `scope`, newest first. */
export function listMessagingSessions(store: ReadStore, scope: FlowScope, limit: number, cursor: string | null): Promise<Page<MessagingSessionView>> {
  const filter: Record<string, unknown> = { orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false };
  if (scope.orgId === null) filter.ownerId = scope.userId;
  return store.collection<MessagingSessionView>(SESSIONS).page(filter, { sort: { createdAt: -1 }, limit, cursor });
}

export type { Ack };
