/**
 * Outbound HTTP: the one way the service calls URLs that users gave it (webhook nodes, messaging
 * webhooks, MCP over HTTP). The adapter (infra/http/outbound.ts) refuses private and loopback
 * addresses unless allowed, pins the connection to the checked address (a kept-alive connection
 * is reused only for a call that checked the same address), follows redirects by hand and bounds
 * time and size; failures are OutboundError with an OUTBOUND_* code.
 */
export type OutboundErrorCode =
  | 'OUTBOUND_INVALID_URL'
  | 'OUTBOUND_ADDRESS_REFUSED'
  | 'OUTBOUND_DNS_FAILED'
  | 'OUTBOUND_TIMEOUT'
  | 'OUTBOUND_ABORTED'
  | 'OUTBOUND_TOO_MANY_REDIRECTS'
  | 'OUTBOUND_RESPONSE_TOO_LARGE'
  | 'OUTBOUND_NETWORK_ERROR';

export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = code === 'OUTBOUND_ABORTED' ? 'AbortError' : 'OutboundError';
  }
}

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Milliseconds for the whole exchange, redirects included. */
  timeoutMs: number;
  signal?: AbortSignal;
  allowPrivateNetwork: boolean;
  maxResponseBytes?: number;
  /** Keep the first maxResponseBytes and say so, instead of failing. */
  truncate?: boolean;
  maxRedirects?: number;
  /**
   * A further check every address must pass, whatever allowPrivateNetwork says (an allowlist a
   * caller wants; tests use it to see redirect hops checked on loopback).
   */
  addressAllowed?: (address: string) => boolean;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  /** The URL that answered (after redirects). */
  url: string;
  redirects: number;
  /** The IP address connected to. */
  address: string;
}

/** Where an address points; anything but `public` is refused unless private networks are allowed. */
export type AddressClass = 'public' | 'private' | 'loopback' | 'link_local' | 'cgnat' | 'multicast' | 'unspecified' | 'reserved' | 'invalid';

export interface OutboundHttp {
  fetch(url: string, init: OutboundInit): Promise<OutboundResponse>;
  classifyAddress(ip: string): AddressClass;
  /** Closes pooled keep-alive connections (at shutdown). */
  close?(): void;
}
