/**
 * Chat ids on the embedded network. A session's address is `<sessionId>@embedded`, a group's
 * `<groupId>@g.embedded`: the id resolves to a stream without a lookup, so routing needs no read
 * model (no projection lag) and works the same in every process.
 */
export const EMBEDDED_SUFFIX = '@embedded';
export const EMBEDDED_GROUP_SUFFIX = '@g.embedded';

export const embeddedAddressOf = (sessionId: string) => `${sessionId}${EMBEDDED_SUFFIX}`;
export const embeddedGroupIdOf = (groupId: string) => `${groupId}${EMBEDDED_GROUP_SUFFIX}`;

/** The session id behind an embedded session address, or null for anything else. */
export function sessionIdOfAddress(address: string): string | null {
  if (!address.endsWith(EMBEDDED_SUFFIX) || address.endsWith(EMBEDDED_GROUP_SUFFIX)) return null;
  const id = address.slice(0, -EMBEDDED_SUFFIX.length);
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) ? id : null;
}

export const isEmbeddedGroupId = (chatId: string) => chatId.endsWith(EMBEDDED_GROUP_SUFFIX);

/** Chat ids in paths and bodies: provider-shaped (`123@c.us`, `x@g.us`, `<id>@embedded`), no slashes. */
export const CHAT_ID_PATTERN = /^[A-Za-z0-9._:+-]{1,128}@[A-Za-z0-9.-]{1,64}$/;
