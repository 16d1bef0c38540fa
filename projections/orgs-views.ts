import type { Doc } from '../ports/read-store.js';
import type { Role } from '../domain/shared/permissions.js';
import type { MembershipView } from './users-auth.js';

/** Read-model shapes of the organizations context. */
export const ORG_COLLECTIONS = {
  orgs: 'orgs',
  /** Read by the authenticator on every organization-scoped request (projections/credentials.ts). */
  members: 'org_members',
  invitations: 'org_invitations',
  workspaces: 'workspaces',
  teams: 'teams',
  /** Sealed keys only; the plaintext is opened on demand by readOrgLlmCredentials. */
  llmCredentials: 'org_llm_credentials',
  spend: 'org_spend',
} as const;

export interface OrgView extends Doc {
  name: string;
  description: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  budgetLimitUsd: number | null;
  /** Absent on organizations that never set them: the service default. */
  runHistoryKeepDays?: number | null;
  runHistoryKeepLast?: number | null;
}

/** The authenticator's MembershipView (`_id = ${orgId}:${userId}`) plus what the members list shows. */
export interface MemberView extends MembershipView {
  role: Role;
  email: string | null;
  name: string | null;
  joinedAt: string;
}

export interface InvitationView extends Doc {
  orgId: string;
  email: string;
  role: Role;
  expiresAt: string;
  invitedBy: string;
  createdAt: string;
  acceptedAt: string | null;
  acceptedBy: string | null;
}

export interface WorkspaceView extends Doc {
  orgId: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

export interface TeamView extends Doc {
  orgId: string;
  name: string;
  description: string;
  memberIds: string[];
  createdBy: string;
  createdAt: string;
}

export interface LlmCredentialView extends Doc {
  orgId: string;
  provider: string;
  sealedApiKey: string;
  baseUrl: string | null;
  updatedAt: string;
}

export interface SpendView extends Doc {
  orgId: string;
  /** `YYYY-MM` (UTC). */
  period: string;
  /** Integer micro-dollars, so sums of many small costs do not drift. */
  spentMicroUsd: number;
  /** Revision of the monthly spend stream last counted. */
  version: number;
}
