import { DomainError } from '../shared/decider.js';
import { roleAllows, type RequiredPermission, type Role } from '../shared/permissions.js';
import type { OrgState } from './state.js';

/** Same code as the authenticator's: to an outsider a deleted or foreign organization does not exist. */
export const orgNotFound = () => new DomainError('ORGANIZATION_NOT_FOUND', 'organization not found', 'not_found');

export function requireLive(state: OrgState): void {
  if (!state.exists || state.deleted) throw orgNotFound();
}

/**
 * The route checked the permission against the read model already; the decider checks it again
 * against the stream, so a role change that raced the request cannot be bypassed.
 */
export function requirePermission(state: OrgState, actorId: string, permission: RequiredPermission): Role {
  requireLive(state);
  const member = state.members[actorId];
  if (!member) throw orgNotFound();
  if (!roleAllows(member.role, permission)) {
    throw new DomainError('FORBIDDEN', `your role (${member.role}) does not grant ${permission}`, 'forbidden', { permission, role: member.role });
  }
  return member.role;
}

export const ownerRoleRequired = (what: string) => new DomainError('OWNER_ROLE_REQUIRED', `only an owner may ${what}`, 'forbidden');

/** Compares two hex digests without an early exit, so the time does not tell how much matched. */
export function digestsEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i % (a.length || 1)) || 0) ^ (b.charCodeAt(i % (b.length || 1)) || 0);
  return diff === 0;
}
