import type { RecordedEvent } from '../domain/shared/events.js';
import type { OrgEvent } from '../domain/orgs/index.js';
import type { SpendEvent } from '../domain/orgs/spend.js';
import type { ReadStore } from '../ports/read-store.js';
import type { Projector } from './projector.js';
import { ORG_COLLECTIONS as C, type LlmCredentialView, type MemberView, type OrgView, type SpendView, type TeamView, type WorkspaceView } from './orgs-views.js';

export * from './orgs-views.js';
export * from './orgs-queries.js';

/**
 * Everything of an `org-…` stream. Writes are absolute (replace, $set, delete, $pull of a scalar),
 * so a redelivered suffix of events, replayed in order, converges to the same documents.
 * Deleting the organization deletes its documents: membership rows are what authorization reads,
 * so every route of a deleted organization answers 404 at once.
 */
const orgsProjector: Projector = {
  name: 'orgs',
  categories: ['org'],
  collections: [C.orgs, C.members, C.invitations, C.workspaces, C.teams, C.llmCredentials],
  async setup(store) {
    await store.collection(C.members).createIndex({ keys: { userId: 1, joinedAt: 1 } });
    await store.collection(C.members).createIndex({ keys: { orgId: 1, joinedAt: 1 } });
    await store.collection(C.invitations).createIndex({ keys: { orgId: 1, createdAt: -1 } });
    await store.collection(C.workspaces).createIndex({ keys: { orgId: 1, createdAt: 1 } });
    await store.collection(C.teams).createIndex({ keys: { orgId: 1, createdAt: 1 } });
    await store.collection(C.llmCredentials).createIndex({ keys: { orgId: 1 } });
  },
  async project(recorded, store) {
    const event = recorded as RecordedEvent & OrgEvent;
    const orgId = recorded.streamId.slice('org-'.length);
    const touch = (at: string) => store.collection<OrgView>(C.orgs).updateOne({ _id: orgId }, { $set: { updatedAt: at } });
    switch (event.type) {
      case 'OrganizationCreated': {
        const { name, description, createdBy, createdAt } = event.data;
        const doc: OrgView = { _id: orgId, name, description, createdBy, createdAt, updatedAt: createdAt, budgetLimitUsd: null };
        await store.collection<OrgView>(C.orgs).replaceOne({ _id: orgId }, doc, { upsert: true });
        return;
      }
      case 'OrganizationUpdated': {
        const { updatedBy: _by, at, ...changes } = event.data;
        await store.collection<OrgView>(C.orgs).updateOne({ _id: orgId }, { $set: { ...changes, updatedAt: at } });
        return;
      }
      case 'OrganizationDeleted':
        await store.collection(C.orgs).deleteOne({ _id: orgId });
        for (const name of [C.members, C.invitations, C.workspaces, C.teams, C.llmCredentials]) await store.collection(name).deleteMany({ orgId });
        return;
      case 'MemberJoined': {
        const { userId, role, email, name, at } = event.data;
        const doc: MemberView = { _id: `${orgId}:${userId}`, orgId, userId, role, email, name, joinedAt: at };
        await store.collection<MemberView>(C.members).replaceOne({ _id: doc._id }, doc, { upsert: true });
        return;
      }
      case 'MemberRoleChanged':
        await store.collection(C.members).updateOne({ _id: `${orgId}:${event.data.userId}` }, { $set: { role: event.data.to } });
        return;
      case 'MemberRemoved':
        await store.collection(C.members).deleteOne({ _id: `${orgId}:${event.data.userId}` });
        await store.collection(C.teams).updateMany({ orgId }, { $pull: { memberIds: event.data.userId } });
        return;
      case 'InvitationCreated': {
        const { invitationId, email, role, expiresAt, invitedBy, at } = event.data;
        await store
          .collection(C.invitations)
          .replaceOne(
            { _id: invitationId },
            { _id: invitationId, orgId, email, role, expiresAt, invitedBy, createdAt: at, acceptedAt: null, acceptedBy: null },
            { upsert: true },
          );
        return;
      }
      case 'InvitationAccepted':
        await store.collection(C.invitations).updateOne({ _id: event.data.invitationId }, { $set: { acceptedAt: event.data.at, acceptedBy: event.data.userId } });
        return;
      case 'WorkspaceCreated': {
        const { workspaceId, name, description, createdBy, at } = event.data;
        const doc: WorkspaceView = { _id: workspaceId, orgId, name, description, createdBy, createdAt: at, updatedAt: at };
        await store.collection<WorkspaceView>(C.workspaces).replaceOne({ _id: workspaceId }, doc, { upsert: true });
        return;
      }
      case 'WorkspaceUpdated': {
        const { workspaceId, updatedBy: _by, at, ...changes } = event.data;
        await store.collection(C.workspaces).updateOne({ _id: workspaceId, orgId }, { $set: { ...changes, updatedAt: at } });
        return;
      }
      case 'WorkspaceDeleted':
        await store.collection(C.workspaces).deleteOne({ _id: event.data.workspaceId, orgId });
        return;
      case 'TeamCreated': {
        const { teamId, name, description, memberIds, createdBy, at } = event.data;
        const doc: TeamView = { _id: teamId, orgId, name, description, memberIds, createdBy, createdAt: at };
        await store.collection<TeamView>(C.teams).replaceOne({ _id: teamId }, doc, { upsert: true });
        return;
      }
      case 'LlmCredentialSet': {
        const { provider, sealedApiKey, baseUrl, at } = event.data;
        const doc: LlmCredentialView = { _id: `${orgId}:${provider}`, orgId, provider, sealedApiKey, baseUrl, updatedAt: at };
        await store.collection<LlmCredentialView>(C.llmCredentials).replaceOne({ _id: doc._id }, doc, { upsert: true });
        await touch(at);
        return;
      }
      case 'LlmCredentialRemoved':
        await store.collection(C.llmCredentials).deleteOne({ _id: `${orgId}:${event.data.provider}` });
        await touch(event.data.at);
        return;
    }
  },
};

/**
 * Monthly spend per organization. `$inc` is not idempotent, so each increment is guarded by the
 * revision of the monthly stream; revision 0 writes absolute values and restarts the count.
 */
const orgSpendProjector: Projector = {
  name: 'org_spend',
  categories: ['orgspend'],
  collections: [C.spend],
  async setup() {},
  async project(recorded, store) {
    const event = recorded as RecordedEvent & SpendEvent;
    if (event.type !== 'LlmSpendRecorded') return;
    const { orgId, amountUsd, at } = event.data;
    const period = at.slice(0, 7);
    const id = `${orgId}:${period}`;
    const micro = Math.round(amountUsd * 1_000_000);
    const spend = store.collection<SpendView>(C.spend);
    if (recorded.revision === 0) {
      await spend.replaceOne({ _id: id }, { _id: id, orgId, period, spentMicroUsd: micro, version: 0 }, { upsert: true });
      return;
    }
    await spend.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $inc: { spentMicroUsd: micro }, $set: { version: recorded.revision } });
  },
};

export const orgProjectors: Projector[] = [orgsProjector, orgSpendProjector];

/** For code that holds a read store and wants to know if an organization (still) exists. */
export const orgExists = async (store: ReadStore, orgId: string) => (await store.collection(C.orgs).findOne({ _id: orgId })) !== null;
