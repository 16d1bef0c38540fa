import type { RecordedEvent } from '../domain/shared/events.js';
import {
  TERMINAL_BEAT_CATEGORY,
  TERMINAL_CATEGORY,
  threadEntryOf,
  type PromptStatus,
  type TerminalBeatEvent,
  type TerminalEvent,
  type ThreadEntry,
} from '../domain/terminals/index.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import type { Projector } from './projector.js';

export interface TerminalDoc extends Doc {
  userId: string;
  name: string;
  host: string;
  cwd: string | null;
  capabilities: string[];
  leaseSeconds: number;
  registeredAt: string;
  connected: boolean;
  disconnectedAt: string | null;
  thinking: { thinking: boolean; label: string | null; at: string } | null;
  /** Revision of the last terminal event applied (redelivered events are skipped). */
  version: number;
  updatedAt: string;
}

export interface TerminalBeatDoc extends Doc {
  lastHeartbeatAt: string;
}

export interface PromptDoc extends Doc {
  terminalId: string;
  userId: string;
  index: number;
  content: string;
  status: PromptStatus;
  deliveries: number;
  sentAt: string;
  deliveredAt: string | null;
  leaseExpiresAt: string | null;
  acknowledgedAt: string | null;
  stepCount: number;
  answer: { content: string; status: 'completed' | 'failed' | 'cancelled'; at: string } | null;
  cancelledAt: string | null;
  version: number;
}

export interface ThreadDoc extends Doc, ThreadEntry {
  terminalId: string;
}

const TERMINALS = 'terminals';
const BEATS = 'terminal_beats';
const PROMPTS = 'terminal_prompts';
const THREAD = 'terminal_thread';

const terminalIdOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);
const threadDocId = (terminalId: string, seq: number) => `${terminalId}:${String(seq).padStart(10, '0')}`;

/** A prompt document after one event (pure): the same status rules as the decider's `promptStatusOf`. */
export function applyToPrompt(doc: PromptDoc, event: TerminalEvent, revision: number): PromptDoc {
  const next = { ...doc, version: revision };
  switch (event.type) {
    case 'PromptDelivered':
      Object.assign(next, { deliveries: event.data.delivery, deliveredAt: event.data.at, leaseExpiresAt: event.data.leaseExpiresAt });
      break;
    case 'PromptStepRecorded':
      Object.assign(next, { stepCount: doc.stepCount + 1, acknowledgedAt: doc.acknowledgedAt ?? event.data.at });
      break;
    case 'PromptAnswered':
      Object.assign(next, { answer: { content: event.data.content, status: event.data.status, at: event.data.at }, acknowledgedAt: doc.acknowledgedAt ?? event.data.at });
      break;
    case 'PromptCancelled':
      next.cancelledAt = event.data.at;
      break;
    default:
      return doc;
  }
  next.status = next.cancelledAt ? 'cancelled' : next.answer ? next.answer.status : next.acknowledgedAt ? 'running' : next.deliveries > 0 ? 'delivered' : 'queued';
  return next;
}

/**
 * Terminals (with their liveness in a separate collection, so the order in which the terminal and
 * beat streams reach the projector does not matter), their prompts, and the thread entries.
 */
export const terminalsProjector: Projector = {
  name: 'terminals',
  categories: [TERMINAL_CATEGORY, TERMINAL_BEAT_CATEGORY],
  collections: [TERMINALS, BEATS, PROMPTS, THREAD],
  async setup(store) {
    await store.collection(TERMINALS).createIndex({ keys: { userId: 1, registeredAt: -1 } });
    await store.collection(PROMPTS).createIndex({ keys: { terminalId: 1, index: 1 } });
    await store.collection(THREAD).createIndex({ keys: { terminalId: 1, seq: 1 } });
  },
  async project(recorded, store) {
    const terminalId = terminalIdOf(recorded.streamId);
    if (recorded.streamId.startsWith(`${TERMINAL_BEAT_CATEGORY}-`)) {
      const beat = recorded as RecordedEvent & TerminalBeatEvent;
      if (beat.type === 'TerminalHeartbeatRecorded') await beatAt(store, terminalId, beat.data.at);
      return;
    }
    const event = recorded as RecordedEvent & TerminalEvent;
    const revision = recorded.revision;
    const terminals = store.collection<TerminalDoc>(TERMINALS);
    const prompts = store.collection<PromptDoc>(PROMPTS);

    const entry = threadEntryOf(event, revision);
    if (entry) {
      await store.collection<ThreadDoc>(THREAD).replaceOne({ _id: threadDocId(terminalId, revision) }, { _id: threadDocId(terminalId, revision), terminalId, ...entry }, { upsert: true });
    }

    switch (event.type) {
      case 'TerminalRegistered': {
        const d = event.data;
        await terminals.replaceOne(
          { _id: terminalId },
          {
            _id: terminalId, userId: d.userId, name: d.name, host: d.host, cwd: d.cwd, capabilities: d.capabilities, leaseSeconds: d.leaseSeconds,
            registeredAt: d.at, connected: true, disconnectedAt: null, thinking: null, version: revision, updatedAt: d.at,
          },
          { upsert: true },
        );
        await beatAt(store, terminalId, d.at);
        return;
      }
      case 'TerminalDisconnected':
      case 'TerminalReconnected':
      case 'TerminalThinkingSet': {
        const set: Partial<TerminalDoc> =
          event.type === 'TerminalDisconnected' ? { connected: false, disconnectedAt: event.data.at }
          : event.type === 'TerminalReconnected' ? { connected: true, disconnectedAt: null }
          : { thinking: { thinking: event.data.thinking, label: event.data.label, at: event.data.at } };
        await terminals.updateOne({ _id: terminalId, version: { $lt: revision } }, { $set: { ...set, version: revision, updatedAt: event.data.at } });
        if (event.type === 'TerminalReconnected') await beatAt(store, terminalId, event.data.at);
        return;
      }
      case 'PromptSent': {
        const owner = await terminals.findOne({ _id: terminalId }, { projection: { userId: 1 } });
        const index = await prompts.count({ terminalId, version: { $lt: revision } });
        await prompts.replaceOne(
          { _id: event.data.promptId },
          {
            _id: event.data.promptId, terminalId, userId: owner?.userId ?? event.data.sentBy, index, content: event.data.content, status: 'queued', deliveries: 0,
            sentAt: event.data.at, deliveredAt: null, leaseExpiresAt: null, acknowledgedAt: null, stepCount: 0, answer: null, cancelledAt: null, version: revision,
          },
          { upsert: true },
        );
        return;
      }
      case 'PromptDelivered':
      case 'PromptStepRecorded':
      case 'PromptAnswered':
      case 'PromptCancelled': {
        const doc = await prompts.findOne({ _id: event.data.promptId });
        if (!doc || doc.version >= revision) return;
        await prompts.replaceOne({ _id: doc._id, version: doc.version }, applyToPrompt(doc, event, revision));
        return;
      }
      default:
        return;
    }
  },
};

async function beatAt(store: ReadStore, terminalId: string, at: string) {
  // $max: a beat redelivered late, or projected before the registration, never moves the time back.
  await store.collection<TerminalBeatDoc>(BEATS).updateOne({ _id: terminalId }, { $max: { lastHeartbeatAt: at } }, { upsert: true });
}

export const terminalProjectors: Projector[] = [terminalsProjector];

// Queries (the API's reads; every one is scoped to the owner: another user's terminal does not exist)

export function getTerminal(store: ReadStore, userId: string, terminalId: string) {
  return store.collection<TerminalDoc>(TERMINALS).findOne({ _id: terminalId, userId });
}

export function listTerminals(store: ReadStore, userId: string, limit: number, cursor: string | null) {
  return store.collection<TerminalDoc>(TERMINALS).page({ userId }, { sort: { registeredAt: -1 }, limit, cursor });
}

export async function lastHeartbeats(store: ReadStore, terminalIds: string[]): Promise<Map<string, string>> {
  if (terminalIds.length === 0) return new Map();
  const docs = await store.collection<TerminalBeatDoc>(BEATS).find({ _id: { $in: terminalIds } });
  return new Map(docs.map((d) => [d._id, d.lastHeartbeatAt]));
}

/** The prompt a terminal is on: the oldest neither answered nor cancelled (delivered ones come first in sending order). */
export function currentPrompt(store: ReadStore, terminalId: string) {
  return store.collection<PromptDoc>(PROMPTS).findOne({ terminalId, status: { $in: ['queued', 'delivered', 'running'] } }, { sort: { index: 1 } });
}

export function getPrompt(store: ReadStore, userId: string, terminalId: string, promptId: string) {
  return store.collection<PromptDoc>(PROMPTS).findOne({ _id: promptId, terminalId, userId });
}

export function listThread(store: ReadStore, terminalId: string, limit: number, cursor: string | null) {
  return store.collection<ThreadDoc>(THREAD).page({ terminalId }, { sort: { seq: 1 }, limit, cursor });
}
