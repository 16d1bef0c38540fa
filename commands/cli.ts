import { randomInt } from 'node:crypto';
import {
  cliTokenDecider,
  cliTokenStreamId,
  decidePoll,
  deviceAuthorizationDecider,
  deviceAuthorizationStreamId,
  deviceTokenError,
  USER_CODE_ALPHABET,
  USER_CODE_LENGTH,
  userCodeFromIndexes,
  type CliTokenCommand,
  type DeviceAuthorizationEvent,
  type PollRecord,
} from '../domain/cli/index.js';
import { DomainError, fold } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, handleCommand, type CommandContext } from './handle.js';
import { claimReservation } from './reservations.js';
import { constantTimeEqual, sha256 } from './users-credentials.js';

const plusMs = (at: Date, ms: number) => new Date(at.getTime() + ms).toISOString();

/** `randomInt` draws by rejection sampling, so every character is equally likely (no modulo bias). */
export function generateUserCode(): string {
  return userCodeFromIndexes(Array.from({ length: USER_CODE_LENGTH }, () => randomInt(USER_CODE_ALPHABET.length)));
}

/** How the web finds an authorization by the code a person typed (already normalized). */
export const hashUserCode = (normalizedCode: string) => sha256(normalizedCode);

/**
 * User codes are unique through a reservation stream per code, claimed before the authorization is
 * recorded and never released: 2.6·10^10 codes make a collision rare, and a collision simply draws
 * another code (up to USER_CODE_ATTEMPTS). A code therefore never points at two authorizations.
 */
export const USER_CODE_RESERVATION = 'device-user-code';
const USER_CODE_ATTEMPTS = 5;

export interface DeviceAuthorizationRequest {
  deviceId: string;
  deviceSecretHash: string;
  clientName: string | null;
  ttlSeconds: number;
  interval: number;
  newUserCode?: () => string;
}

export async function requestDeviceAuthorization(store: EventStore, context: CommandContext, request: DeviceAuthorizationRequest) {
  const draw = request.newUserCode ?? generateUserCode;
  for (let attempt = 1; attempt <= USER_CODE_ATTEMPTS; attempt++) {
    const userCode = draw();
    try {
      await claimReservation(store, context, USER_CODE_RESERVATION, userCode, request.deviceId);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'ALREADY_TAKEN') continue;
      throw err;
    }
    const expiresAt = plusMs(context.now, request.ttlSeconds * 1000);
    const result = await handleCommand(store, {
      streamId: deviceAuthorizationStreamId(request.deviceId),
      decider: deviceAuthorizationDecider,
      command: {
        type: 'RequestDeviceAuthorization',
        deviceId: request.deviceId,
        deviceSecretHash: request.deviceSecretHash,
        userCodeHash: hashUserCode(userCode),
        clientName: request.clientName,
        interval: request.interval,
        at: context.now.toISOString(),
        expiresAt,
      },
      context,
    });
    return { userCode, expiresAt, position: result.position };
  }
  throw new DomainError('USER_CODE_UNAVAILABLE', 'could not draw an unused user code; try again', 'unavailable');
}

export async function decideDeviceAuthorization(store: EventStore, context: CommandContext, deviceId: string, decision: 'approve' | 'deny', userId: string) {
  const at = context.now.toISOString();
  return handleCommand(store, {
    streamId: deviceAuthorizationStreamId(deviceId),
    decider: deviceAuthorizationDecider,
    command: decision === 'approve' ? { type: 'ApproveDeviceAuthorization', userId, at } : { type: 'DenyDeviceAuthorization', userId, at },
    context,
  });
}

/**
 * The last poll of each device, in this API process's memory: a poll is not worth an event, and
 * slow_down only needs to be right for a client that keeps talking to the same process. Entries
 * go when the answer becomes final or the authorization has expired.
 */
export class DevicePollTracker {
  private readonly polls = new Map<string, PollRecord & { forgetAfter: number }>();

  constructor(private readonly maxEntries = 100_000) {}

  get(deviceId: string): PollRecord | null {
    const entry = this.polls.get(deviceId);
    return entry ? { lastPollAt: entry.lastPollAt, interval: entry.interval } : null;
  }

  remember(deviceId: string, record: PollRecord | null, forgetAfter: string) {
    this.polls.delete(deviceId);
    if (!record) return;
    if (this.polls.size >= this.maxEntries) this.sweep(Date.parse(record.lastPollAt));
    this.polls.set(deviceId, { ...record, forgetAfter: Date.parse(forgetAfter) });
  }

  get size() {
    return this.polls.size;
  }

  private sweep(now: number) {
    for (const [id, entry] of this.polls) if (entry.forgetAfter <= now) this.polls.delete(id);
    // Still full of live devices: forget the oldest; at worst one of them escapes a slow_down.
    for (const id of this.polls.keys()) {
      if (this.polls.size < this.maxEntries) break;
      this.polls.delete(id);
    }
  }
}

export interface DeviceTokenExchange {
  deviceId: string;
  presentedSecretHash: string;
  /** The CLI token to create when the authorization is approved (its secret stays with the caller). */
  tokenId: string;
  tokenSecretHash: string;
  tokenTtlDays: number;
}

/**
 * One poll of the token endpoint: throws the RFC 8628 error to answer, or redeems the approved
 * authorization (once: the redemption is appended with the stream's revision, so of two racing
 * polls one gets invalid_grant) and creates the CLI token for the user who approved it.
 */
export async function exchangeDeviceCode(store: EventStore, context: CommandContext, tracker: DevicePollTracker, exchange: DeviceTokenExchange) {
  const streamId = deviceAuthorizationStreamId(exchange.deviceId);
  const recorded = await store.readStream(streamId);
  const state = fold(deviceAuthorizationDecider.evolve, deviceAuthorizationDecider.initialState, recorded as unknown as DeviceAuthorizationEvent[]);
  if (!state.exists || !constantTimeEqual(exchange.presentedSecretHash, state.deviceSecretHash!)) throw deviceTokenError('invalid_grant');

  const at = context.now.toISOString();
  const decision = decidePoll(state, at, tracker.get(exchange.deviceId));
  tracker.remember(exchange.deviceId, decision.poll, state.expiresAt!);
  if (decision.answer !== 'issue_token') throw deviceTokenError(decision.answer, decision.interval);

  // The token is the approver's doing: record it under their name.
  const asApprover: CommandContext = { ...context, actorId: decision.userId };
  await handleCommand(store, {
    streamId,
    decider: deviceAuthorizationDecider,
    command: { type: 'RedeemDeviceAuthorization', tokenId: exchange.tokenId, at },
    context: asApprover,
  });
  const created = await createCliToken(store, asApprover, {
    tokenId: exchange.tokenId,
    userId: decision.userId,
    name: state.clientName,
    secretHash: exchange.tokenSecretHash,
    source: 'device',
    deviceId: exchange.deviceId,
    lifetimeDays: exchange.tokenTtlDays,
  });
  return { ...created, userId: decision.userId };
}

/** The token as the decider takes it, with a lifetime instead of an expiry: the expiry is counted from the context's time. */
export type CliTokenRequest = Omit<Extract<CliTokenCommand, { type: 'CreateCliToken' }>, 'type' | 'at' | 'expiresAt'> & { lifetimeDays: number };

export async function createCliToken(store: EventStore, context: CommandContext, request: CliTokenRequest) {
  const { lifetimeDays, ...token } = request;
  const expiresAt = plusMs(context.now, lifetimeDays * 86_400_000);
  const result = await handleAtContextTime(store, context, cliTokenStreamId(token.tokenId), cliTokenDecider, { type: 'CreateCliToken', ...token, expiresAt });
  return { tokenId: token.tokenId, expiresAt, position: result.position };
}

export async function revokeCliToken(store: EventStore, context: CommandContext, tokenId: string, userId: string) {
  return handleAtContextTime(store, context, cliTokenStreamId(tokenId), cliTokenDecider, { type: 'RevokeCliToken', userId });
}
