import type { SessionStatus } from '../domain/messaging/index.js';
import type { EventStore } from '../ports/event-store.js';
import { ProviderError, type InboundEnvelope, type MessagingProviders } from '../ports/messaging-provider.js';
import type { CommandContext } from './handle.js';
import { executeSessionCommand, loadSession, providerRefOf } from './messaging.js';

/**
 * Provider webhooks arrive late and out of order with our own polling: a late STARTING or QR must
 * not undo a later state (a real restart passes through STOPPED or FAILED first).
 */
const LATE_STATUS_GUARD: Partial<Record<SessionStatus, SessionStatus[]>> = {
  STARTING: ['STOPPED', 'FAILED', 'STARTING'],
  SCAN_QR_CODE: ['STOPPED', 'FAILED', 'STARTING', 'SCAN_QR_CODE'],
};

export interface InboundPorts {
  eventStore: EventStore;
  providers: MessagingProviders;
}

/**
 * Records what a WAHA event (already authenticated) says about one of our WAHA sessions, as
 * `msgsession` events: a status change (with the QR fetched while SCAN_QR_CODE, and who the
 * session is paired as once WORKING), a received message, or an ack. Events for unknown, deleted
 * or non-WAHA sessions and events we do not record answer `recorded: false`, so WAHA does not
 * retry them forever.
 */
export async function recordInboundEvent(ports: InboundPorts, context: CommandContext, sessionId: string, envelope: InboundEnvelope): Promise<{ recorded: boolean; position: number | null }> {
  const { eventStore } = ports;
  const { state } = await loadSession(eventStore, sessionId);
  if (!state.exists || state.deleted || state.provider !== 'waha') return { recorded: false, position: null };
  const change = ports.providers.inbound('waha').translate(envelope, state.me?.id ?? null, context.now);
  if (!change) return { recorded: false, position: null };
  let position: number | null;
  switch (change.type) {
    case 'status': {
      const { status } = change;
      const provider = ports.providers.provider('waha');
      let qr: string | undefined;
      let me = change.me;
      try {
        if (status === 'SCAN_QR_CODE') qr = (await provider.qr(providerRefOf(state))) ?? undefined;
        if (status === 'WORKING' && !me) me = (await provider.me(providerRefOf(state))) ?? undefined;
      } catch (err) {
        // The status stands without the QR or the identity; the next event or poll brings them.
        if (!(err instanceof ProviderError)) throw err;
      }
      const result = await executeSessionCommand(eventStore, context, sessionId, {
        type: 'ChangeStatus',
        status,
        ...(LATE_STATUS_GUARD[status] ? { onlyFrom: LATE_STATUS_GUARD[status] } : {}),
        ...(qr ? { qr } : {}),
        ...(me ? { me } : {}),
        ...(status === 'FAILED' ? { reason: 'reported by WAHA' } : {}),
      });
      position = result.position;
      break;
    }
    case 'message':
      position = (await executeSessionCommand(eventStore, context, sessionId, { type: 'RecordReceived', message: change.message })).position;
      break;
    case 'ack':
      position = (await executeSessionCommand(eventStore, context, sessionId, { type: 'ChangeAck', messageId: change.messageId, ack: change.ack })).position;
      break;
  }
  return { recorded: position !== null, position };
}
