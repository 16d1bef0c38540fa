import type { Ack, ChatGroup, ChatMessage, ProviderKind, SessionStatus } from '../domain/messaging/events.js';

/**
 * The messaging network behind a session. Two adapters: `embedded` (a network among this service's
 * own sessions, carried by events and a consumer) and `waha` (HTTP to a WAHA server, whose events
 * come back to us through the inbound route). What the provider pushes back (messages, acks,
 * status) is recorded as `msgsession` events by the caller, never kept in the adapter.
 */
export interface ProviderSessionRef {
  sessionId: string;
  /** The provider's own name for the session (WAHA `session`). */
  providerSessionName: string;
  /** Our address on the network, when known in advance (embedded). */
  address: string | null;
  name: string;
}

export interface ProviderStatus {
  status: SessionStatus;
  qr?: string;
  me?: { id: string; pushName?: string };
  reason?: string;
}

export interface StartOptions {
  /** Where the provider should push its events (WAHA webhook URL); null for the embedded network. */
  callbackUrl: string | null;
}

export interface SendTextInput {
  chatId: string;
  text: string;
  replyTo?: string | null;
}

export interface SentText {
  /** The network's id of the message. */
  id: string;
  timestamp: string;
}

export interface MarkReadInput {
  chatId: string;
  /** The received message ids covered (for providers that mark message by message). */
  messageIds: string[];
}

export interface MessagingProvider {
  readonly kind: ProviderKind;
  /** Creates/starts the session on the network; answers where it stands now. */
  start(session: ProviderSessionRef, options: StartOptions): Promise<ProviderStatus>;
  stop(session: ProviderSessionRef): Promise<void>;
  /** Stops and forgets the session on the network (our event history stays). */
  remove(session: ProviderSessionRef): Promise<void>;
  status(session: ProviderSessionRef): Promise<ProviderStatus>;
  /** The QR value to scan while the status is SCAN_QR_CODE, or null. */
  qr(session: ProviderSessionRef): Promise<string | null>;
  me(session: ProviderSessionRef): Promise<{ id: string; pushName?: string } | null>;
  sendText(session: ProviderSessionRef, input: SendTextInput, newId: () => string, now: Date): Promise<SentText>;
  markRead(session: ProviderSessionRef, input: MarkReadInput): Promise<void>;
  /** Groups the provider holds, or null when our read model is the source (embedded). */
  listGroups(session: ProviderSessionRef): Promise<ChatGroup[] | null>;
}

/** The provider failed or refused: the caller records FAILED or answers 502. */
export class ProviderError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** An event a provider pushed to us, as its inbound route received it (WAHA: `{event, session, payload, me}`). */
export interface InboundEnvelope {
  event: string;
  payload: Record<string, unknown>;
  me?: unknown;
}

/** What an inbound provider event means for the session, in our terms. */
export type InboundChange =
  | { type: 'status'; status: SessionStatus; me?: { id: string; pushName?: string } }
  | { type: 'message'; message: ChatMessage }
  | { type: 'ack'; messageId: string; ack: Ack };

/** The provider's side of its inbound webhook: who may post to it, and how its wire format reads. */
export interface ProviderInbound {
  /** Whether `signature` authenticates these exact bytes; always false when no key is configured. */
  verify(rawBody: string, signature: string | undefined): boolean;
  /**
   * The change an event asks for, or null for one we do not record (another event type, our own
   * message echoed back, a malformed payload). `self` is the session's own id on the network.
   */
  translate(envelope: InboundEnvelope, self: string | null, now: Date): InboundChange | null;
}

/** The messaging providers of this process (stateless adapters; every fact lives in events). */
export interface MessagingProviders {
  /** The adapter for a provider kind; throws MESSAGING_PROVIDER_UNAVAILABLE when it is not configured. */
  provider(kind: ProviderKind): MessagingProvider;
  available(kind: ProviderKind): boolean;
  /** WAHA's inbound webhook; present whether or not a WAHA server is configured (it then refuses every signature). */
  inbound(kind: 'waha'): ProviderInbound;
  close(): Promise<void>;
}
