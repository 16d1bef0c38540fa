import { expect } from 'chai';
import type { OrgEvent } from '../../domain/orgs/index.js';
import type { SpendEvent } from '../../domain/orgs/spend.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { findMembership } from '../../projections/users-auth.js';
import { getOrg, listMembers, listTeams, orgProjectors, spentUsd } from '../../projections/orgs.js';

const at = '2026-02-03T00:00:00.000Z';
let position = 0;
function recorded(streamId: string, events: Array<OrgEvent | SpendEvent>): RecordedEvent[] {
  return events.map((e, revision) => ({
    id: `e${++position}`, type: e.type, streamId, revision, position, schemaVersion: 1, data: e.data,
    metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
  }));
}
async function project(store: MemoryReadStore, events: RecordedEvent[]) {
  for (const e of events) for (const p of orgProjectors) if (p.categories.includes(e.streamId.split('-')[0])) await p.project(e, store);
}
async function fresh() {
  const store = new MemoryReadStore();
  for (const p of orgProjectors) await p.setup(store);
  return store;
}

const member = (userId: string, role: 'owner' | 'viewer'): OrgEvent => ({
  type: 'MemberJoined', data: { userId, role, email: `${userId}@x.test`, name: null, via: 'invitation', invitationId: null, at },
});
const orgEvents = recorded('org-o1', [
  { type: 'OrganizationCreated', data: { orgId: 'o1', name: 'Acme', description: '', createdBy: 'u1', createdAt: at } },
  member('u1', 'owner'),
  { type: 'WorkspaceCreated', data: { workspaceId: 'w1', name: 'Default', description: '', createdBy: 'u1', at } },
  member('u2', 'viewer'),
  { type: 'TeamCreated', data: { teamId: 't1', name: 'T', description: '', memberIds: ['u1', 'u2'], createdBy: 'u1', at } },
  { type: 'MemberRoleChanged', data: { userId: 'u2', from: 'viewer', to: 'editor', changedBy: 'u1', at } },
  { type: 'MemberRemoved', data: { userId: 'u2', removedBy: 'u1', left: false, at } },
  { type: 'OrganizationUpdated', data: { budgetLimitUsd: 12, updatedBy: 'u1', at } },
]);

describe('organization projections', () => {
  it('writes the authenticator\'s membership shape and the lists', async () => {
    const store = await fresh();
    await project(store, orgEvents);
    expect(await findMembership(store, 'o1', 'u1')).to.include({ _id: 'o1:u1', orgId: 'o1', userId: 'u1', role: 'owner' });
    expect(await findMembership(store, 'o1', 'u2')).to.equal(null);
    expect((await getOrg(store, 'o1'))?.budgetLimitUsd).to.equal(12);
    expect((await listTeams(store, 'o1', 10, null)).items[0].memberIds).to.deep.equal(['u1']);
  });

  it('converges when a suffix of events is delivered again (at-least-once)', async () => {
    const store = await fresh();
    await project(store, orgEvents);
    await project(store, orgEvents.slice(3));
    expect(await findMembership(store, 'o1', 'u2')).to.equal(null);
    expect((await listMembers(store, 'o1', 10, null)).items.map((m) => m.userId)).to.deep.equal(['u1']);
    expect((await listTeams(store, 'o1', 10, null)).items[0].memberIds).to.deep.equal(['u1']);
  });

  it('counts spend once per event even when redelivered, per month', async () => {
    const store = await fresh();
    const spend = (amountUsd: number): SpendEvent => ({ type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd, runId: null, spendId: null, at } });
    const events = recorded('orgspend-o1.2026-02', [spend(0.1), spend(0.2), spend(0.3)]);
    await project(store, events);
    await project(store, events.slice(1));
    await project(store, events);
    expect(await spentUsd(store, 'o1', '2026-02')).to.equal(0.6);
    expect(await spentUsd(store, 'o1', '2026-03')).to.equal(0);
  });

  it('removes every document of a deleted organization', async () => {
    const store = await fresh();
    await project(store, [...orgEvents, ...recorded('org-o1', [{ type: 'OrganizationDeleted', data: { deletedBy: 'u1', at } }]).map((e) => ({ ...e, revision: orgEvents.length }))]);
    expect(await getOrg(store, 'o1')).to.equal(null);
    expect(await findMembership(store, 'o1', 'u1')).to.equal(null);
    expect((await listTeams(store, 'o1', 10, null)).items).to.deep.equal([]);
  });
});
