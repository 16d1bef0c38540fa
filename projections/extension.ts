import {
  EXTENSION_CHAT_CATEGORY,
  EXTENSION_CHAT_SOURCE,
  type ChatMessage,
  type ChatScope,
  type ExtensionChatEvent,
} from '../domain/extension/index.js';
import type { FlowScope } from '../domain/flows/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type Page, type ReadStore } from '../ports/read-store.js';
import { FLOWS } from './flows.js';
import type { FlowDefinition, FlowDoc } from './flows-doc.js';
import { type Projector, ownedCollections } from './projector.js';

/** The web extension's read side: its chats (`extension_chats`) and the flows it may run (read from `flows`). */
export const EXTENSION_CHATS = 'extension_chats';

export interface ExtensionChatDoc extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  source: typeof EXTENSION_CHAT_SOURCE;
  title: string;
  messages: ChatMessage[];
  messageCount: number;
  /** Version of the messages (1 at creation, +1 per replacement). */
  messageVersion: number;
  createdAt: string;
  updatedAt: string;
  /** A deleted chat stays as a tombstone (a redelivered older event cannot bring it back); queries skip it. */
  deleted: boolean;
  /** Stream revision of the last projected event: the redelivery guard. */
  revision: number;
}

export const extensionChatsProjector: Projector = {
  name: 'extension-chats',
  categories: [EXTENSION_CHAT_CATEGORY],
  ...ownedCollections({ [EXTENSION_CHATS]: [{ keys: { ownerId: 1, orgId: 1, deleted: 1, createdAt: -1 }, name: 'extension_chats_by_owner' }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & ExtensionChatEvent;
    const chats = store.collection<ExtensionChatDoc>(EXTENSION_CHATS);
    const _id = recorded.streamId.slice(EXTENSION_CHAT_CATEGORY.length + 1);
    const guard = { _id, revision: { $lt: recorded.revision } };
    switch (event.type) {
      case 'ExtensionChatCreated': {
        const d = event.data;
        try {
          await chats.insertOne({
            _id, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, source: d.source, title: d.title,
            messages: d.messages, messageCount: d.messages.length, messageVersion: 1, createdAt: d.at, updatedAt: d.at, deleted: false, revision: recorded.revision,
          });
        } catch (err) {
          if (!(err instanceof DuplicateKeyError)) throw err; // redelivered
        }
        return;
      }
      case 'ExtensionChatRenamed':
      case 'ExtensionChatTitleGenerated':
        await chats.updateOne(guard, { $set: { title: event.data.title, updatedAt: event.data.at, revision: recorded.revision } });
        return;
      case 'ExtensionChatMessagesReplaced':
        await chats.updateOne(guard, {
          $set: { messages: event.data.messages, messageCount: event.data.messages.length, messageVersion: event.data.version, updatedAt: event.data.at, revision: recorded.revision },
        });
        return;
      case 'ExtensionChatDeleted':
        await chats.updateOne(guard, { $set: { deleted: true, messages: [], messageCount: 0, updatedAt: event.data.at, revision: recorded.revision } });
        return;
    }
  },
};

export const extensionProjectors: Projector[] = [extensionChatsProjector];

// ---------------------------------------------------------------- queries

const ownerFilter = (scope: ChatScope) => ({ ownerId: scope.userId, orgId: scope.orgId, deleted: false });

/** The caller's chats in its tenant, newest first (without messages). */
export async function listExtensionChats(store: ReadStore, scope: ChatScope, options: { limit: number; cursor?: string | null }): Promise<Page<ExtensionChatDoc>> {
  return store.collection<ExtensionChatDoc>(EXTENSION_CHATS).page(ownerFilter(scope), {
    sort: { createdAt: -1 },
    limit: options.limit,
    cursor: options.cursor ?? null,
    projection: { messages: 0 },
  });
}

/** One of the caller's chats with its messages, or null (missing, deleted, or another's). */
export function getExtensionChat(store: ReadStore, scope: ChatScope, chatId: string): Promise<ExtensionChatDoc | null> {
  return store.collection<ExtensionChatDoc>(EXTENSION_CHATS).findOne({ _id: chatId, ...ownerFilter(scope) });
}

/** `id` as every other resource answers it; `chatId` repeats it for clients of the previous version (deprecated, issue 36). */
export function chatView(doc: ExtensionChatDoc, withMessages: boolean) {
  return {
    id: doc._id,
    chatId: doc._id,
    source: doc.source,
    title: doc.title,
    messageCount: doc.messageCount,
    version: doc.messageVersion,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    ...(withMessages && { messages: doc.messages }),
  };
}

export interface ExtensionFlow {
  flowId: string;
  name: string;
  description: string | null;
  updatedAt: string;
  inputSchema: Record<string, unknown>;
}

/**
 * The flows the extension can run in `scope`: active flows whose trigger has an input schema (the
 * extension draws its form from it), most recently updated first. The flows read model keeps the
 * schema inside the definition's JSON text, so pages of flows are read and filtered here; a page
 * may hold fewer items than `limit` while `nextCursor` is set (at most `maxScanned` flows per call).
 */
export async function listExtensionFlows(store: ReadStore, scope: FlowScope, options: { limit: number; cursor?: string | null; maxScanned?: number }): Promise<Page<ExtensionFlow>> {
  const filter: Record<string, unknown> = { orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false, archived: false };
  if (scope.orgId === null) filter.ownerId = scope.userId;
  const flows = store.collection<FlowDoc>(FLOWS);
  const items: ExtensionFlow[] = [];
  let cursor = options.cursor ?? null;
  let scanned = 0;
  const maxScanned = options.maxScanned ?? 500;
  do {
    const page = await flows.page(filter, { sort: { updatedAt: -1 }, limit: options.limit, cursor, projection: { nodeTriggers: 0 } });
    scanned += page.items.length;
    for (const doc of page.items) {
      let definition: FlowDefinition;
      try {
        definition = JSON.parse(doc.definition) as FlowDefinition;
      } catch {
        continue;
      }
      const schema = definition.trigger?.inputSchema;
      if (schema && typeof schema === 'object') {
        items.push({ flowId: doc._id, name: String(doc.name ?? ''), description: (doc.description as string | null | undefined) ?? null, updatedAt: String(doc.updatedAt), inputSchema: schema });
      }
    }
    cursor = page.nextCursor;
  } while (items.length === 0 && cursor && scanned < maxScanned);
  return { items, nextCursor: cursor };
}
