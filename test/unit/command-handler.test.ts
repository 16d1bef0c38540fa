import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedState, ConflictError, handleCommand, PreconditionFailedError, type CommandContext } from '../../commands/handle.js';
import { claimReservation } from '../../commands/reservations.js';
import { streamsBeingWritten } from '../../commands/stream-writers.js';
import { probeDecider } from '../../domain/probes/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { ConcurrencyError, type EventStore } from '../../ports/event-store.js';

const context = (): CommandContext => ({
  actorId: 'u1', orgId: 'o1', workspaceId: 'w1', correlationId: 'c1', causationId: null, requestId: 'r1', now: new Date('2026-01-01T00:00:00Z'),
});
const create = { type: 'CreateProbe' as const, probeId: 'p', name: 'p', at: '2026-01-01T00:00:00Z' };
const inc = { type: 'IncrementProbe' as const, by: 1, at: '2026-01-01T00:00:00Z' };

describe('command handler', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = new SqliteEventStore(':memory:');
  });
  afterEach(() => store.close());

  it('appends the decided events with the metadata of the command', async () => {
    const result = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    expect(result.revision).to.equal(0);
    const [event] = await store.readStream('probe-p');
    expect(event.type).to.equal('ProbeCreated');
    expect(event.metadata).to.deep.equal({
      actorId: 'u1', orgId: 'o1', workspaceId: 'w1', correlationId: 'c1', causationId: null, requestId: 'r1', occurredAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('serializes concurrent commands on one stream: none is lost', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    await Promise.all(Array.from({ length: 20 }, () => handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), maxAttempts: 50 })));
    const events = await store.readStream('probe-p');
    expect(events.filter((e) => e.type === 'ProbeIncremented')).to.have.length(20);
  });

  it('decides concurrent commands on one stream one after another: none conflicts, none is retried', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    const counting: EventStore = Object.create(store);
    let appends = 0;
    let conflicts = 0;
    counting.append = async (...args) => {
      appends += 1;
      try {
        return await store.append(...args);
      } catch (err) {
        if (err instanceof ConcurrencyError) conflicts += 1;
        throw err;
      }
    };
    // maxAttempts 1: a single conflict would refuse a command.
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => handleCommand(counting, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), maxAttempts: 1 })));
    expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([]);
    expect(conflicts).to.equal(0);
    expect(appends).to.equal(200);
    const revisions = results.map((r) => (r as PromiseFulfilledResult<{ revision: number }>).value.revision);
    expect(revisions, 'each decided on the state the one before it appended').to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(streamsBeingWritten(counting), 'no queue left behind').to.equal(0);
  });

  it("retries another process's appends to the same stream until every command lands", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'handler-')), 'events.db');
    const a = new SqliteEventStore(file);
    const b = new SqliteEventStore(file);
    try {
      await handleCommand(a, { streamId: 'probe-r', decider: probeDecider, command: { ...create, probeId: 'r' }, context: context() });
      // Two processes' handlers on one stream: each serializes its own writers, so they only race each other.
      const storm = (store: EventStore) => Array.from({ length: 60 }, () => handleCommand(store, { streamId: 'probe-r', decider: probeDecider, command: inc, context: context() }));
      const results = await Promise.allSettled([...storm(a), ...storm(b)]);
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
      expect((await a.readStream('probe-r')).filter((e) => e.type === 'ProbeIncremented')).to.have.length(120);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('lets the commands queued behind a failed one run', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    const refused = handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() }); // already exists
    const next = handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context() });
    expect(await refused.then(() => 'appended', (e: DomainError) => e.code)).to.not.equal('appended');
    expect((await next).state).to.include({ value: 1 });
  });

  it('gives up with a 409 ConflictError after the bounded retries', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    // A store whose appends always lose the race.
    const racing: EventStore = Object.create(store);
    let attempts = 0;
    racing.append = async (streamId) => {
      attempts += 1;
      throw new ConcurrencyError(streamId, 0, 1);
    };
    const err = await handleCommand(racing, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), maxAttempts: 3 }).catch((e) => e);
    expect(err).to.be.instanceOf(ConflictError);
    expect(err.kind).to.equal('conflict');
    expect(attempts).to.equal(3);
  });

  it('checks an expected revision from the client without retrying (412)', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), expectedRevision: 0 });
    const err = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), expectedRevision: 0 }).catch((e) => e);
    expect(err).to.be.instanceOf(PreconditionFailedError);
    expect(err.kind).to.equal('precondition_failed');
    expect(await store.readStream('probe-p')).to.have.length(2);
  });

  it('appends nothing when the decider decides nothing', async () => {
    await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    const result = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: { ...inc, by: 0 }, context: context() });
    expect(result.position).to.equal(null);
    expect(await store.readStream('probe-p')).to.have.length(1);
  });

  it('sees appends made by another process to the same log (the folded-state cache never hides them)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'handler-')), 'events.db');
    const a = new SqliteEventStore(file);
    const b = new SqliteEventStore(file);
    try {
      await handleCommand(a, { streamId: 'probe-q', decider: probeDecider, command: { ...create, probeId: 'q' }, context: context() });
      await handleCommand(a, { streamId: 'probe-q', decider: probeDecider, command: inc, context: context() });
      await handleCommand(b, { streamId: 'probe-q', decider: probeDecider, command: { ...inc, by: 10 }, context: context() });
      const result = await handleCommand(a, { streamId: 'probe-q', decider: probeDecider, command: inc, context: context() });
      expect(result.state.value).to.equal(12);
      expect(result.revision).to.equal(3);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('remembers the global position of the last event it appended or read, so a caller need not read it back', async () => {
    const created = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
    expect(cachedState(store, 'probe-p', probeDecider)).to.include({ revision: 0, position: created.position });
    await store.append('other-x', [{ id: 'x', type: 'Other', data: {}, metadata: { ...context(), occurredAt: '2026-01-01T00:00:00Z' } } as never], 'any');
    const incremented = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context() });
    expect(incremented.position).to.be.greaterThan(created.position!);
    expect(cachedState(store, 'probe-p', probeDecider)).to.include({ revision: 1, position: incremented.position });
    // Appended behind the handler's back (another process): the next load reads it and its position.
    const behind = await store.append('probe-p', [{ id: 'y', type: 'ProbeIncremented', data: { by: 2, at: inc.at }, metadata: { ...context(), occurredAt: inc.at } } as never], 1);
    const nothing = await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: { ...inc, by: 0 }, context: context() });
    expect(nothing.position).to.equal(null);
    expect(cachedState(store, 'probe-p', probeDecider)).to.include({ revision: 2, position: behind.position });
  });

  describe('newStream: a stream the caller just named', () => {
    /** The store, counting reads and appends (with their expected revisions). */
    function counting() {
      const spy: EventStore = Object.create(store);
      const calls = { reads: 0, appends: [] as unknown[] };
      spy.readStream = (...args) => {
        calls.reads += 1;
        return store.readStream(...args);
      };
      spy.append = (streamId, events, expected) => {
        calls.appends.push(expected);
        return store.append(streamId, events, expected);
      };
      return { spy, calls };
    }

    it('decides on the initial state and appends with no_stream, reading nothing', async () => {
      const { spy, calls } = counting();
      const result = await handleCommand(spy, { streamId: 'probe-n', decider: probeDecider, command: { ...create, probeId: 'n' }, context: context(), newStream: true });
      expect(result.revision).to.equal(0);
      expect(calls).to.deep.equal({ reads: 0, appends: ['no_stream'] });
      expect(cachedState(spy, 'probe-n', probeDecider)).to.include({ revision: 0, position: result.position });
    });

    it('falls back to reading the stream when it exists after all, and reports what the decider says then', async () => {
      await handleCommand(store, { streamId: 'probe-p', decider: probeDecider, command: create, context: context() });
      {
        // A store whose cache knows nothing of probe-p (as in another process), over the same log.
        const { spy, calls } = counting();
        const fresh: EventStore = Object.create(spy);
        const err = await handleCommand(fresh, { streamId: 'probe-p', decider: probeDecider, command: create, context: context(), newStream: true, maxAttempts: 1 }).catch((e) => e);
        expect(err).to.be.instanceOf(DomainError);
        expect(err).to.not.be.instanceOf(ConflictError);
        expect(calls.appends).to.deep.equal(['no_stream']);
        expect(calls.reads).to.be.greaterThan(0);
        // A command the existing stream accepts is appended after the read, at its revision.
        const ok = await handleCommand(fresh, { streamId: 'probe-p', decider: probeDecider, command: inc, context: context(), newStream: true, maxAttempts: 1 });
        expect(ok.revision).to.equal(1);
      }
    });
  });

  it('keeps only the latest 500 settled states in its folded-state cache, live ones up to 10,000', async () => {
    // Own decider objects: each decider has its own cache.
    const settledWhenIncremented = { ...probeDecider, settled: (s: { value: number }) => s.value > 0 };
    const neverSettled = { ...probeDecider };
    for (const [decider, prefix] of [[settledWhenIncremented, 's'], [neverSettled, 'l']] as const) {
      for (let i = 0; i < 600; i++) {
        const streamId = `probe-${prefix}${i}`;
        await handleCommand(store, { streamId, decider, command: { ...create, probeId: `${prefix}${i}` }, context: context() });
        await handleCommand(store, { streamId, decider, command: inc, context: context() });
      }
    }
    expect(cachedState(store, 'probe-s0', settledWhenIncremented), 'the oldest settled state').to.equal(undefined);
    expect(cachedState(store, 'probe-s99', settledWhenIncremented), 'the 100th settled state').to.equal(undefined);
    expect(cachedState(store, 'probe-s100', settledWhenIncremented)?.state).to.include({ value: 1 });
    expect(cachedState(store, 'probe-s599', settledWhenIncremented)?.state).to.include({ value: 1 });
    expect(cachedState(store, 'probe-l0', neverSettled)?.state, 'a live state is kept').to.include({ value: 1 });
    // A settled state read again comes back whole from the log.
    const again = await handleCommand(store, { streamId: 'probe-s0', decider: settledWhenIncremented, command: inc, context: context() });
    expect(again.state).to.include({ value: 2 });
    expect(again.revision).to.equal(2);
  });

  it('refuses to append an event that does not match its schema', async () => {
    const sloppy = { ...probeDecider, decide: () => [{ type: 'ProbeCreated' as const, data: { probeId: 'p', name: '', createdAt: 'x' } }] };
    const err = await handleCommand(store, { streamId: 'probe-p', decider: sloppy, command: create, context: context() }).catch((e) => e);
    expect(err.message).to.match(/ProbeCreated does not match its schema/);
    expect(await store.readStream('probe-p')).to.have.length(0);
  });

  it('keeps a unique key with reservation streams, even under concurrent claims', async () => {
    const claims = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((owner) => claimReservation(store, context(), 'email', 'x@example.com', owner)),
    );
    const won = claims.filter((c) => c.status === 'fulfilled');
    expect(won).to.have.length(1);
    for (const c of claims) if (c.status === 'rejected') expect((c.reason as DomainError).code).to.equal('ALREADY_TAKEN');
    const all = await store.readAll({ maxCount: 100 });
    expect(all.map((e) => e.streamId).every((s) => s.startsWith('reservation-email.'))).to.equal(true);
    expect(all.some((e) => JSON.stringify(e).includes('x@example.com')), 'the key never appears in clear').to.equal(false);
  });
});
