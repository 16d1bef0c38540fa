import { LRUCache } from 'lru-cache';
import type { RecordedEvent } from '../domain/shared/events.js';
import { DuplicateKeyError, type Doc, type ReadStore, type WriteOp } from '../ports/read-store.js';

/**
 * A read model of one document per stream whose `state` is the stream's folded state as JSON text
 * (runs, workflows). Projecting is "fold, write back", guarded by the stream revision so a
 * redelivered event changes nothing. A batch folds each stream's events onto its state once and
 * writes every stream of the batch with one bulk write: per event, a long stream (a workflow
 * holding 2,000 signals) would be read, parsed and rewritten whole for each of its events.
 */
export interface FoldedDoc extends Doc {
  version: number;
  state: string;
}

export interface FoldedDocsSpec<S extends { version: number }, D extends FoldedDoc> {
  collection: string;
  /** The stream id's prefix before the document id (`run-`). */
  streamPrefix: string;
  initial: S;
  evolve(state: S, event: RecordedEvent): S;
  docOf(id: string, state: S): D;
  /**
   * Writes that follow from a document's change (the workflow timers), made after it was written.
   * Absolute, so making them again is harmless.
   */
  afterWrite?(store: ReadStore, id: string, before: S, after: S): Promise<void>;
}

/**
 * The state this process last wrote per stream, so the next batch folds on it without reading and
 * parsing the document. Only a base while the stored version is still the one written: writes
 * from it are guarded by exactly that version, and a write that matches nothing drops the cache
 * and the batch is projected again from what is stored. Per read store (tests run several).
 * Reads `peek`: only a write makes a stream the most recent, so the one written longest ago goes first.
 */
const CACHE_MAX = 2_048;

export function foldedDocs<S extends { version: number }, D extends FoldedDoc>(spec: FoldedDocsSpec<S, D>) {
  const caches = new WeakMap<ReadStore, LRUCache<string, S>>();
  const cacheOf = (store: ReadStore) => {
    let cache = caches.get(store);
    if (!cache) caches.set(store, (cache = new LRUCache({ max: CACHE_MAX })));
    return cache;
  };
  const fold = (state: S, events: RecordedEvent[]) => events.reduce<S>((s, e) => ({ ...spec.evolve(s, e), version: e.revision }), state);

  /** A batch's events per stream, in log order. */
  function byStream(events: RecordedEvent[]): Map<string, RecordedEvent[]> {
    const streams = new Map<string, RecordedEvent[]>();
    for (const e of events) {
      const id = e.streamId.slice(spec.streamPrefix.length);
      const list = streams.get(id);
      if (list) list.push(e);
      else streams.set(id, [e]);
    }
    return streams;
  }

  /**
   * One write per stream: from the cached state (guard: the cached version), from the stored
   * document (guard: its version), or for a stream not stored yet an upsert guarded by
   * `version < last` (a newer document makes it a refused duplicate, which changes nothing).
   */
  async function writeBatch(store: ReadStore, streams: Map<string, RecordedEvent[]>, useCache: boolean): Promise<'ok' | 'stale'> {
    const docs = store.collection<D>(spec.collection);
    const cache = cacheOf(store);
    const bases = new Map<string, S>();
    const unknown: string[] = [];
    for (const [id, events] of streams) {
      const cached = useCache ? cache.peek(id) : undefined;
      if (cached && cached.version < events[0].revision) bases.set(id, cached);
      // A batch holding a stream's first event folds it from the start: nothing stored can be a
      // base, so it is not read (the guarded upsert settles a replay). Reading new streams made
      // every batch a lookup over the whole collection on FerretDB, whose cost grew with it.
      else if (events[0].revision !== 0) unknown.push(id);
    }
    const stored = new Map<string, D>();
    if (unknown.length) {
      for (const doc of await docs.find({ _id: unknown.length === 1 ? unknown[0] : { $in: unknown } })) stored.set(doc._id, doc);
    }
    const ops: WriteOp<D>[] = [];
    const written = new Map<string, { before: S; after: S }>();
    for (const [id, events] of streams) {
      const base = bases.get(id);
      const doc = base ? undefined : stored.get(id);
      if (base || doc) {
        const before = base ?? (cache.peek(id)?.version === doc!.version ? cache.peek(id)! : (JSON.parse(doc!.state) as S));
        const fresh = events.filter((e) => e.revision > before.version);
        if (!fresh.length) continue; // replayed: already projected
        const after = fold(before, fresh);
        ops.push({ replaceOne: { filter: { _id: id, version: before.version }, replacement: spec.docOf(id, after) } });
        written.set(id, { before, after });
      } else {
        const before = { ...spec.initial, version: events[0].revision - 1 };
        const after = fold(before, events);
        ops.push({ replaceOne: { filter: { _id: id, version: { $lt: after.version } }, replacement: spec.docOf(id, after), upsert: true } });
        written.set(id, { before, after });
      }
    }
    if (!ops.length) return 'ok';
    const result = await docs.bulkWrite(ops);
    // Every write found its version or inserted; otherwise the cache was behind what is stored.
    if (result.matched + result.upserted !== ops.length) {
      for (const id of streams.keys()) cache.delete(id);
      return 'stale';
    }
    for (const [id, { before, after }] of written) {
      cache.set(id, after);
      await spec.afterWrite?.(store, id, before, after);
    }
    return 'ok';
  }

  /**
   * Each stream's events of the batch folded at once, every stream written by one bulk write. A
   * write that found the stored document moved on (the cache was behind) or refused as a
   * duplicate (a newer document appeared) projects the batch again from what is stored, then
   * event by event.
   */
  async function projectBatch(events: RecordedEvent[], store: ReadStore): Promise<void> {
    const streams = byStream(events);
    try {
      if ((await writeBatch(store, streams, true)) === 'ok') return;
      if ((await writeBatch(store, streams, false)) === 'ok') return;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      for (const id of streams.keys()) cacheOf(store).delete(id);
    }
    for (const event of events) await projectOne(event, store);
  }

  /** One event on what is stored, bypassing the cache: the last resort of a batch. */
  async function projectOne(recorded: RecordedEvent, store: ReadStore): Promise<void> {
    const docs = store.collection<D>(spec.collection);
    const id = recorded.streamId.slice(spec.streamPrefix.length);
    cacheOf(store).delete(id);
    const doc = await docs.findOne({ _id: id });
    if (doc && doc.version >= recorded.revision) return;
    const before: S = doc ? (JSON.parse(doc.state) as S) : { ...spec.initial, version: recorded.revision - 1 };
    const after = { ...spec.evolve(before, recorded), version: recorded.revision };
    if (!doc) {
      try {
        await docs.insertOne(spec.docOf(id, after));
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        return;
      }
    } else {
      const result = await docs.replaceOne({ _id: id, version: doc.version }, spec.docOf(id, after));
      if (!result.matched) return;
    }
    await spec.afterWrite?.(store, id, before, after);
  }

  return { projectBatch, projectOne };
}
