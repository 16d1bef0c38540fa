/** The permissions named in the API catalog, and what each organization role grants. */
export const PERMISSIONS = ['view_resources', 'edit_resources', 'manage_settings', 'manage_members', 'manage_workspaces', 'manage_teams'] as const;
export type Permission = (typeof PERMISSIONS)[number];
/** `owner` is not granted by a role's list: only the owner role holds it (deleting the organization). */
export type RequiredPermission = Permission | 'owner';

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  editor: ['view_resources', 'edit_resources'],
  viewer: ['view_resources'],
};

export function roleAllows(role: Role, permission: RequiredPermission): boolean {
  if (permission === 'owner') return role === 'owner';
  return ROLE_PERMISSIONS[role].includes(permission);
}
