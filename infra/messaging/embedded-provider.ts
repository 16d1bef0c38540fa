import { embeddedAddressOf } from '../../domain/messaging/addresses.js';
import type { MessagingProvider, ProviderSessionRef } from '../../ports/messaging-provider.js';

/**
 * The embedded network: nothing to call. Pairing is immediate (the session's address is its
 * identity), and delivery, receipts and groups happen through `msgsession` events and the
 * `messaging-network` consumer, so they work across processes and survive restarts.
 */
export function embeddedProvider(): MessagingProvider {
  const meOf = (session: ProviderSessionRef) => ({ id: session.address ?? embeddedAddressOf(session.sessionId), pushName: session.name });
  return {
    kind: 'embedded',
    async start(session) {
      return { status: 'WORKING', me: meOf(session) };
    },
    async stop() {},
    async remove() {},
    async status(session) {
      return { status: 'WORKING', me: meOf(session) };
    },
    async qr() {
      return null;
    },
    async me(session) {
      return meOf(session);
    },
    async sendText(_session, _input, newId, now) {
      return { id: newId(), timestamp: now.toISOString() };
    },
    async markRead() {},
    async listGroups() {
      return null;
    },
  };
}
