import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedState, ConflictError, handleCommand, PreconditionFailedError, type CommandContext } from '../../commands/handle.js';
import { claimReservation } from '../../commands/reservations.js';
import { probeDecider } from '../../domain/probes/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { ConcurrencyError, type EventStore } from '../../infra/ports/event-store.js';

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
