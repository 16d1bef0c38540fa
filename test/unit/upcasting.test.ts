import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { upcast, type Upcaster } from '../../domain/shared/upcasting.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { UpcastingEventStore } from '../../infra/event-store/upcasting.js';

const upcasters: Upcaster[] = [
  { type: 'NameSet', fromVersion: 1, upcast: (d) => ({ fullName: (d as { name: string }).name }) },
  { type: 'NameSet', fromVersion: 2, upcast: (d) => ({ ...(d as object), locale: 'en' }) },
];
const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: '2026-01-01T00:00:00Z' };

describe('upcasting', () => {
  it('chains upcasters from the stored version to the current one', () => {
    expect(upcast(upcasters, 'NameSet', 1, { name: 'Ada' })).to.deep.equal({ version: 3, data: { fullName: 'Ada', locale: 'en' } });
    expect(upcast(upcasters, 'NameSet', 3, { fullName: 'Ada', locale: 'fr' })).to.deep.equal({ version: 3, data: { fullName: 'Ada', locale: 'fr' } });
    expect(upcast(upcasters, 'Other', 1, { x: 1 })).to.deep.equal({ version: 1, data: { x: 1 } });
  });

  it('applies on every read path of the store, leaving the log untouched', async () => {
    const raw = new SqliteEventStore(':memory:');
    const store = new UpcastingEventStore(raw, upcasters);
    await store.append('user-1', [{ id: randomUUID(), type: 'NameSet', data: { name: 'Ada' }, metadata, schemaVersion: 1 }], 'no_stream');
    const [fromStream] = await store.readStream('user-1');
    const [fromAll] = await store.readAll();
    expect(fromStream.data).to.deep.equal({ fullName: 'Ada', locale: 'en' });
    expect(fromStream.schemaVersion).to.equal(3);
    expect(fromAll.data).to.deep.equal(fromStream.data);
    const sub = store.subscribe();
    for await (const e of sub) {
      expect(e.data).to.deep.equal({ fullName: 'Ada', locale: 'en' });
      break;
    }
    await sub.close();
    expect((await raw.readStream('user-1'))[0].data).to.deep.equal({ name: 'Ada' });
    await store.close();
  });
});
