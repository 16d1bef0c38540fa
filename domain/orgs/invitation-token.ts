/**
 * An invitation token is `<orgId>.<invitationId>.<secret>`: the ids route it to its stream and
 * entry without any lookup table, the secret (stored only as SHA-256) proves it was mailed to you.
 */
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const SECRET = /^[A-Za-z0-9_-]{16,128}$/;

export function formatInvitationToken(orgId: string, invitationId: string, secret: string): string {
  return `${orgId}.${invitationId}.${secret}`;
}

/** Null for anything that is not shaped like a token (answered as "not found", like a wrong secret). */
export function parseInvitationToken(token: string): { orgId: string; invitationId: string; secret: string } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [orgId, invitationId, secret] = parts;
  if (!ID.test(orgId) || !ID.test(invitationId) || !SECRET.test(secret)) return null;
  return { orgId, invitationId, secret };
}
