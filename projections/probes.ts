import type { RecordedEvent } from '../domain/shared/events.js';
import type { ProbeEvent } from '../domain/probes/index.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

export interface ProbeView extends Doc {
  name: string;
  value: number;
  version: number;
  createdAt: string;
  updatedAt: string;
  acknowledgedBy: string | null;
}

const COLLECTION = 'probes';

export const probesProjector: Projector = {
  name: 'probes',
  categories: ['probe'],
  ...ownedCollections({ [COLLECTION]: [{ keys: { updatedAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & ProbeEvent;
    const probes = store.collection<ProbeView>(COLLECTION);
    const id = recorded.streamId.slice('probe-'.length);
    switch (event.type) {
      case 'ProbeCreated':
        await probes.replaceOne(
          { _id: id },
          { _id: id, name: event.data.name, value: 0, version: recorded.revision, createdAt: event.data.createdAt, updatedAt: event.data.createdAt, acknowledgedBy: null },
          { upsert: true },
        );
        return;
      case 'ProbeIncremented':
        // Guarded by version so that a redelivered event is not counted twice.
        await probes.updateOne(
          { _id: id, version: { $lt: recorded.revision } },
          { $inc: { value: event.data.by }, $set: { version: recorded.revision, updatedAt: event.data.at } },
        );
        return;
      case 'ProbeAcknowledged':
        await probes.updateOne(
          { _id: id, version: { $lt: recorded.revision } },
          { $set: { acknowledgedBy: event.data.by, version: recorded.revision, updatedAt: event.data.at } },
        );
        return;
    }
  },
};

export function getProbe(store: ReadStore, probeId: string) {
  return store.collection<ProbeView>(COLLECTION).findOne({ _id: probeId });
}

export function listProbes(store: ReadStore, limit: number, cursor: string | null) {
  return store.collection<ProbeView>(COLLECTION).page({}, { sort: { updatedAt: -1 }, limit, cursor });
}
