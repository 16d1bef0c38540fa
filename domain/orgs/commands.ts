import type { Role } from '../shared/permissions.js';
import type { LlmProvider } from './events.js';

/** Commands of the organization aggregate. `actorId` is who asks; the decider checks their role itself. */
export type OrgCommand =
  | {
      type: 'CreateOrganization';
      orgId: string;
      name: string;
      description: string;
      creator: { userId: string; email: string | null; name: string | null };
      defaultWorkspaceId: string;
      at: string;
    }
  | { type: 'UpdateOrganization'; actorId: string; name?: string; description?: string; budgetLimitUsd?: number | null; runHistoryKeepDays?: number | null; runHistoryKeepLast?: number | null; at: string }
  | { type: 'DeleteOrganization'; actorId: string; at: string }
  | { type: 'ChangeMemberRole'; actorId: string; userId: string; role: Role; at: string }
  /** `userId === actorId` is leaving, which needs no permission. */
  | { type: 'RemoveMember'; actorId: string; userId: string; at: string }
  | { type: 'InviteMember'; actorId: string; invitationId: string; email: string; role: Role; secretHash: string; expiresAt: string; at: string }
  /** `email` is the accepting account's, compared case-insensitively with the invitation's. */
  | { type: 'AcceptInvitation'; invitationId: string; secretHash: string; userId: string; email: string; name: string | null; at: string }
  | { type: 'CreateWorkspace'; actorId: string; workspaceId: string; name: string; description: string; at: string }
  | { type: 'UpdateWorkspace'; actorId: string; workspaceId: string; name?: string; description?: string; at: string }
  | { type: 'DeleteWorkspace'; actorId: string; workspaceId: string; at: string }
  | { type: 'CreateTeam'; actorId: string; teamId: string; name: string; description: string; memberIds: string[]; at: string }
  | { type: 'SetLlmCredential'; actorId: string; provider: LlmProvider; sealedApiKey: string; baseUrl: string | null; at: string }
  | { type: 'RemoveLlmCredential'; actorId: string; provider: LlmProvider; at: string };
