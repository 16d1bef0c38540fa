import { DomainError } from '../domain/shared/decider.js';
import type { FlowScope } from '../domain/flows/index.js';
import {
  embeddedAddressOf,
  messagingDecider,
  msgSessionStreamId,
  type MessagingCommand,
  type MessagingSessionState,
  type ProviderKind,
} from '../domain/messaging/index.js';
import type { EventStore } from '../ports/event-store.js';
import { ProviderError, type MessagingProvider, type ProviderSessionRef } from '../ports/messaging-provider.js';
import { handleAtContextTime, loadState, type CommandContext, type HandleResult, type WithoutAt } from './handle.js';
import { claimReservation, releaseReservation } from './reservations.js';

/** Every session write goes through here: the command gets its time from the context. */
export function executeSessionCommand(store: EventStore, context: CommandContext, sessionId: string, command: WithoutAt<MessagingCommand>) {
  return handleAtContextTime(store, context, msgSessionStreamId(sessionId), messagingDecider, command);
}

export function loadSession(store: EventStore, sessionId: string) {
  return loadState(store, msgSessionStreamId(sessionId), messagingDecider);
}

export const providerRefOf = (state: MessagingSessionState): ProviderSessionRef => ({
  sessionId: state.sessionId!,
  providerSessionName: state.providerSessionName ?? state.sessionId!,
  address: state.address,
  name: state.pushName ?? state.name ?? '',
});

const NAME_SCOPE = 'msgsession-name';
/** Names are unique where they are listed together: per owner for personal sessions, per workspace in an organization. */
const nameKey = (scope: FlowScope, name: string) => `${scope.orgId ?? '-'}/${scope.workspaceId ?? '-'}/${scope.orgId ? '' : scope.userId}/${name.toLowerCase()}`;

export interface InitializeInput {
  sessionId: string;
  name: string;
  provider: ProviderKind;
  pushName?: string;
  scope: FlowScope;
  /** The URL the provider should push its events to (WAHA); null for the embedded network. */
  callbackUrl: string | null;
}

/**
 * Initialise then start: STOPPED (initialised) → STARTING → whatever the provider answers
 * (embedded: WORKING at once; WAHA: SCAN_QR_CODE with the QR, or STARTING), FAILED with the reason
 * when the provider cannot be reached. STARTING is recorded before calling the provider so that a
 * provider webhook arriving first is never undone by our late answer (`onlyFrom`).
 */
export async function initializeSession(store: EventStore, context: CommandContext, provider: MessagingProvider, input: InitializeInput): Promise<HandleResult<MessagingSessionState, unknown>> {
  try {
    await claimReservation(store, context, NAME_SCOPE, nameKey(input.scope, input.name), input.sessionId);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ALREADY_TAKEN') {
      throw new DomainError('MESSAGING_SESSION_NAME_TAKEN', `a session named "${input.name}" already exists`, 'conflict', { field: 'body.name' });
    }
    throw err;
  }
  const { sessionId } = input;
  const initialized = await executeSessionCommand(store, context, sessionId, {
    type: 'InitializeSession',
    sessionId,
    name: input.name,
    provider: input.provider,
    ownerId: input.scope.userId,
    orgId: input.scope.orgId,
    workspaceId: input.scope.workspaceId,
    ...(input.pushName ? { pushName: input.pushName } : {}),
    ...(input.provider === 'embedded' ? { address: embeddedAddressOf(sessionId) } : { providerSessionName: sessionId }),
  });
  const starting = await executeSessionCommand(store, context, sessionId, { type: 'ChangeStatus', status: 'STARTING' });
  let last: HandleResult<MessagingSessionState, unknown> = starting;
  try {
    const answer = await provider.start(providerRefOf(initialized.state), { callbackUrl: input.callbackUrl });
    last = await executeSessionCommand(store, context, sessionId, { type: 'ChangeStatus', ...answer, onlyFrom: ['STARTING'] });
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    last = await executeSessionCommand(store, context, sessionId, { type: 'ChangeStatus', status: 'FAILED', reason: err.message, onlyFrom: ['STARTING'] });
  }
  return { ...last, position: last.position ?? starting.position ?? initialized.position };
}

/** Disconnect (provider stop + remove, best effort) then delete; the event history stays, the name is freed. */
export async function deleteSession(store: EventStore, context: CommandContext, provider: MessagingProvider, sessionId: string) {
  const { state } = await loadSession(store, sessionId);
  if (!state.exists || state.deleted) throw new DomainError('MESSAGING_SESSION_NOT_FOUND', 'messaging session not found', 'not_found');
  let providerError: string | null = null;
  try {
    await provider.stop(providerRefOf(state));
    await provider.remove(providerRefOf(state));
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    // The provider may be gone already; the session is deleted on our side regardless.
    providerError = err.message;
  }
  const result = await executeSessionCommand(store, context, sessionId, { type: 'DeleteSession' });
  await releaseReservation(store, context, NAME_SCOPE, nameKey({ userId: state.ownerId ?? '', orgId: state.orgId, workspaceId: state.workspaceId }, state.name ?? ''), sessionId).catch(() => undefined);
  return { result, providerError };
}
