import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, isRefusedAddress, OutboundError } from '../http/outbound.js';

/**
 * The outbound rule (DESIGN.md section 7) for an MCP server URL at registration: http(s) only,
 * and with ALLOW_PRIVATE_NETWORK false no address the host resolves to may be private, loopback
 * or otherwise non-public. The client checks again at every connect (DNS may have changed).
 */
export async function checkMcpUrl(raw: string, allowPrivateNetwork: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('OUTBOUND_INVALID_URL', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('OUTBOUND_INVALID_URL', 'only http and https URLs can be used');
  if (url.username || url.password) throw new OutboundError('OUTBOUND_INVALID_URL', 'put credentials in headers, not in the URL');
  if (allowPrivateNetwork) return;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new OutboundError('OUTBOUND_DNS_FAILED', `the host ${host} could not be resolved`, { host });
  }
  const refused = addresses.find((a) => isRefusedAddress(a));
  if (refused) {
    throw new OutboundError(
      'OUTBOUND_ADDRESS_REFUSED',
      `${host} resolves to a ${classifyAddress(refused)} address, which the service may not reach (ALLOW_PRIVATE_NETWORK is false)`,
      { host, addressClass: classifyAddress(refused) },
    );
  }
}
