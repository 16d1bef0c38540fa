import { expect } from 'chai';
import type { OrgEvent } from '../../domain/orgs/index.js';
import type { SpendEvent } from '../../domain/orgs/spend.js';
import { findMembership } from '../../projections/users-auth.js';
import { getOrg, listMembers, listTeams, orgProjectors, spentUsd } from '../../projections/orgs.js';
import { projectAll, projectionSpec, recordAll, type GivenEvent } from '../support/projection-spec.js';

const at = '2026-02-03T00:00:00.000Z';
const inOrg = (event: OrgEvent | SpendEvent, streamId = 'org-o1'): GivenEvent => ({ streamId, event, occurredAt: at });

const member = (userId: string, role: 'owner' | 'viewer'): OrgEvent => ({
  type: 'MemberJoined', data: { userId, role, email: `${userId}@x.test`, name: null, via: 'invitation', invitationId: null, at },
});
const orgEvents: GivenEvent[] = [
  { type: 'OrganizationCreated', data: { orgId: 'o1', name: 'Acme', description: '', createdBy: 'u1', createdAt: at } },
  member('u1', 'owner'),
  { type: 'WorkspaceCreated', data: { workspaceId: 'w1', name: 'Default', description: '', createdBy: 'u1', at } },
  member('u2', 'viewer'),
  { type: 'TeamCreated', data: { teamId: 't1', name: 'T', description: '', memberIds: ['u1', 'u2'], createdBy: 'u1', at } },
  { type: 'MemberRoleChanged', data: { userId: 'u2', from: 'viewer', to: 'editor', changedBy: 'u1', at } },
  { type: 'MemberRemoved', data: { userId: 'u2', removedBy: 'u1', left: false, at } },
  { type: 'OrganizationUpdated', data: { budgetLimitUsd: 12, updatedBy: 'u1', at } },
].map((e) => inOrg(e as OrgEvent));

describe('organization projections', () => {
  it('writes the authenticator\'s membership shape and the lists', async () => {
    await projectionSpec(orgProjectors).given(orgEvents).then(async (store) => {
      expect(await findMembership(store, 'o1', 'u1')).to.include({ _id: 'o1:u1', orgId: 'o1', userId: 'u1', role: 'owner' });
      expect(await findMembership(store, 'o1', 'u2')).to.equal(null);
      expect((await getOrg(store, 'o1'))?.budgetLimitUsd).to.equal(12);
      expect((await listTeams(store, 'o1', 10, null)).items[0].memberIds).to.deep.equal(['u1']);
    });
  });

  it('converges when a suffix of events is delivered again (at-least-once)', async () => {
    await projectionSpec(orgProjectors).given(orgEvents).then(async (store) => {
      await projectAll(orgProjectors, store, recordAll(orgEvents).slice(3));
      expect(await findMembership(store, 'o1', 'u2')).to.equal(null);
      expect((await listMembers(store, 'o1', 10, null)).items.map((m) => m.userId)).to.deep.equal(['u1']);
      expect((await listTeams(store, 'o1', 10, null)).items[0].memberIds).to.deep.equal(['u1']);
    });
  });

  it('counts spend once per event even when redelivered, per month', async () => {
    const spend = (amountUsd: number) => inOrg({ type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd, runId: null, spendId: null, at } }, 'orgspend-o1.2026-02');
    const events = [spend(0.1), spend(0.2), spend(0.3)];
    await projectionSpec(orgProjectors).given(events).then(async (store) => {
      await projectAll(orgProjectors, store, recordAll(events).slice(1));
      await projectAll(orgProjectors, store, recordAll(events));
      expect(await spentUsd(store, 'o1', '2026-02')).to.equal(0.6);
      expect(await spentUsd(store, 'o1', '2026-03')).to.equal(0);
    });
  });

  it('removes every document of a deleted organization', async () => {
    await projectionSpec(orgProjectors)
      .given([...orgEvents, inOrg({ type: 'OrganizationDeleted', data: { deletedBy: 'u1', at } })])
      .then(async (store) => {
        expect(await getOrg(store, 'o1')).to.equal(null);
        expect(await findMembership(store, 'o1', 'u1')).to.equal(null);
        expect((await listTeams(store, 'o1', 10, null)).items).to.deep.equal([]);
      });
  });
});
