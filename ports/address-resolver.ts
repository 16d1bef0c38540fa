/**
 * Host name resolution for the outbound rule (DESIGN.md section 7) where a URL is checked before
 * any request is made (an MCP server's URL at registration): each address with its class
 * ('public', 'private', 'loopback', … as in outbound-http.ts). The rule that judges the answer is
 * pure (domain/mcp/url-policy.ts); the lookup is I/O (adapter: infra/mcp/address-resolver.ts).
 * Requests themselves go through OutboundHttp (outbound-http.ts), which checks again.
 */
export interface ResolvedAddress {
  address: string;
  addressClass: string;
}

export interface AddressResolver {
  /** Every address of `host` (an IP literal is its own answer); rejects when the host cannot be resolved. */
  resolve(host: string): Promise<ResolvedAddress[]>;
}
