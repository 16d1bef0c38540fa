import { expect } from 'chai';
import type { MessagingEvent } from '../../domain/messaging/index.js';
import { findMessagingSession, getMessagingSessionAnyTenant, listMessagingSessions, messagingProjector } from '../../projections/messaging.js';
import { projectionSpec, type GivenEvent } from '../support/projection-spec.js';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
const on = (sessionId: string, event: MessagingEvent): GivenEvent => ({ streamId: `msgsession-${sessionId}`, event });
const initialized = (sessionId: string, s: number, extra: Partial<Extract<MessagingEvent, { type: 'MessagingSessionInitialized' }>['data']> = {}): GivenEvent =>
  on(sessionId, {
    type: 'MessagingSessionInitialized',
    data: { sessionId, name: `name ${sessionId}`, provider: 'embedded', ownerId: 'u1', orgId: null, workspaceId: null, address: `${sessionId}@embedded`, at: at(s), ...extra },
  });
const status = (sessionId: string, s: number, data: Omit<Extract<MessagingEvent, { type: 'MessagingSessionStatusChanged' }>['data'], 'sessionId' | 'at'>): GivenEvent =>
  on(sessionId, { type: 'MessagingSessionStatusChanged', data: { sessionId, ...data, at: at(s) } });

describe('messaging sessions projection', () => {
  it('follows a session through its statuses: the QR only while scanning, me once paired, deleted at the end', async () => {
    await projectionSpec([messagingProjector])
      .given([
        initialized('s1', 1, { provider: 'waha', address: undefined, providerSessionName: 's1' }),
        status('s1', 2, { status: 'STARTING', previous: 'STOPPED' }),
        status('s1', 3, { status: 'SCAN_QR_CODE', previous: 'STARTING', qr: 'qr-1' }),
        initialized('s2', 4),
        status('s2', 5, { status: 'FAILED', previous: 'STOPPED', reason: 'unreachable' }),
      ])
      .thenDocuments('messaging_sessions', [
        {
          _id: 's1', id: 's1', name: 'name s1', provider: 'waha', status: 'SCAN_QR_CODE', ownerId: 'u1', orgId: null, workspaceId: null, deleted: false,
          address: null, providerSessionName: 's1', me: null, qr: 'qr-1', reason: null, lastChangeAt: at(3), createdAt: at(1), version: 2,
        },
        { _id: 's2', status: 'FAILED', reason: 'unreachable', address: 's2@embedded', providerSessionName: null, lastChangeAt: at(5), version: 1 },
      ]);

    await projectionSpec([messagingProjector])
      .given([
        initialized('s1', 1),
        status('s1', 2, { status: 'SCAN_QR_CODE', previous: 'STOPPED', qr: 'qr-1' }),
        status('s1', 3, { status: 'WORKING', previous: 'SCAN_QR_CODE', me: { id: 's1@embedded', pushName: 'One' } }),
        status('s1', 4, { status: 'STOPPED', previous: 'WORKING', reason: 'deleted' }),
        on('s1', { type: 'MessagingSessionDeleted', data: { sessionId: 's1', at: at(5) } }),
      ])
      .thenDocuments('messaging_sessions', [
        { _id: 's1', status: 'STOPPED', qr: null, me: { id: 's1@embedded', pushName: 'One' }, reason: 'deleted', deleted: true, lastChangeAt: at(5), version: 4 },
      ]);
  });

  it('answers a session only to its tenant, hides deleted ones, and lists a scope newest first', async () => {
    await projectionSpec([messagingProjector])
      .given([
        initialized('mine-old', 1),
        initialized('mine-new', 2),
        initialized('theirs', 3, { ownerId: 'u2' }),
        initialized('org', 4, { ownerId: 'u2', orgId: 'o1', workspaceId: 'w1' }),
        initialized('gone', 5),
        on('gone', { type: 'MessagingSessionDeleted', data: { sessionId: 'gone', at: at(6) } }),
      ])
      .then(async (store) => {
        const me = { userId: 'u1', orgId: null, workspaceId: null };
        expect((await findMessagingSession(store, 'mine-old', me))?.id).to.equal('mine-old');
        expect(await findMessagingSession(store, 'theirs', me)).to.equal(null);
        expect(await findMessagingSession(store, 'org', me)).to.equal(null);
        expect((await findMessagingSession(store, 'org', { userId: 'u1', orgId: 'o1', workspaceId: 'w1' }))?.id).to.equal('org');
        expect(await findMessagingSession(store, 'gone', me)).to.equal(null);
        expect((await getMessagingSessionAnyTenant(store, 'gone'))?.deleted).to.equal(true);
        const page = await listMessagingSessions(store, me, 10, null);
        expect(page.items.map((s) => s.id)).to.deep.equal(['mine-new', 'mine-old']);
        const first = await listMessagingSessions(store, me, 1, null);
        expect(first.items.map((s) => s.id)).to.deep.equal(['mine-new']);
        expect((await listMessagingSessions(store, me, 1, first.nextCursor)).items.map((s) => s.id)).to.deep.equal(['mine-old']);
      });
  });
});
