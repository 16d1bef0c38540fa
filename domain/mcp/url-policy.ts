import { DomainError } from '../shared/decider.js';

/**
 * The outbound rule (DESIGN.md section 7) for an MCP server URL at registration: http(s) only, no
 * credentials in the URL, and with ALLOW_PRIVATE_NETWORK false no address the host resolves to may
 * be private, loopback or otherwise non-public. Resolving the host is I/O (a port); judging the
 * answer is this rule. The client checks again at every connect (DNS may have changed).
 */
export interface ClassifiedAddress {
  address: string;
  /** 'public' or why not ('private', 'loopback', 'link_local', …). */
  addressClass: string;
}

const FIELD = 'body.url';

/** The host to resolve (IPv6 without brackets); throws OUTBOUND_INVALID_URL for a URL the rule refuses outright. */
export function mcpUrlHost(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('OUTBOUND_INVALID_URL', 'not a valid URL', 'invalid', { field: FIELD });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DomainError('OUTBOUND_INVALID_URL', 'only http and https URLs can be used', 'invalid', { field: FIELD });
  if (url.username || url.password) throw new DomainError('OUTBOUND_INVALID_URL', 'put credentials in headers, not in the URL', 'invalid', { field: FIELD });
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export const mcpUrlUnresolvable = (host: string) => new DomainError('OUTBOUND_DNS_FAILED', `the host ${host} could not be resolved`, 'invalid', { host, field: FIELD });

/** One non-public address refuses the host: a name cannot hide a private address among public ones. */
export function checkMcpUrlAddresses(host: string, addresses: readonly ClassifiedAddress[]): void {
  const refused = addresses.find((a) => a.addressClass !== 'public');
  if (!refused) return;
  throw new DomainError(
    'OUTBOUND_ADDRESS_REFUSED',
    `${host} resolves to a ${refused.addressClass} address, which the service may not reach (ALLOW_PRIVATE_NETWORK is false)`,
    'forbidden',
    { host, addressClass: refused.addressClass, field: FIELD },
  );
}
