import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';
import { decidePoll, deviceTokenError } from './device-poll.js';

/**
 * One device authorization of the OAuth 2.0 device flow (RFC 8628), stream `devicecode-<deviceId>`:
 * requested by a CLI, approved or denied by a signed-in user on the web, redeemed for a CLI token
 * exactly once. Only hashes of the device secret and of the user code are recorded.
 */
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
const isoTime = z.string().datetime({ offset: true });
export const clientNameSchema = z.string().trim().min(1).max(100);

export const deviceAuthorizationEventSchemas = {
  DeviceAuthorizationRequested: z.object({
    deviceId: z.string().min(1),
    deviceSecretHash: sha256Hex,
    /** SHA-256 of the normalized user code: the web finds the authorization by it. */
    userCodeHash: sha256Hex,
    clientName: clientNameSchema.nullable(),
    /** Minimum seconds between polls, as told to the client. */
    interval: z.number().int().positive(),
    requestedAt: isoTime,
    expiresAt: isoTime,
  }),
  DeviceAuthorizationApproved: z.object({ userId: z.string().min(1), approvedAt: isoTime }),
  DeviceAuthorizationDenied: z.object({ userId: z.string().min(1), deniedAt: isoTime }),
  /** The approved authorization was exchanged for the CLI token `tokenId`; it cannot be exchanged again. */
  DeviceAuthorizationRedeemed: z.object({ tokenId: z.string().min(1), redeemedAt: isoTime }),
};

type Data<K extends keyof typeof deviceAuthorizationEventSchemas> = z.infer<(typeof deviceAuthorizationEventSchemas)[K]>;
export type DeviceAuthorizationEvent =
  | { type: 'DeviceAuthorizationRequested'; data: Data<'DeviceAuthorizationRequested'> }
  | { type: 'DeviceAuthorizationApproved'; data: Data<'DeviceAuthorizationApproved'> }
  | { type: 'DeviceAuthorizationDenied'; data: Data<'DeviceAuthorizationDenied'> }
  | { type: 'DeviceAuthorizationRedeemed'; data: Data<'DeviceAuthorizationRedeemed'> };

export type DeviceAuthorizationCommand =
  | {
      type: 'RequestDeviceAuthorization';
      deviceId: string;
      deviceSecretHash: string;
      userCodeHash: string;
      clientName: string | null;
      interval: number;
      at: string;
      expiresAt: string;
    }
  | { type: 'ApproveDeviceAuthorization'; userId: string; at: string }
  | { type: 'DenyDeviceAuthorization'; userId: string; at: string }
  | { type: 'RedeemDeviceAuthorization'; tokenId: string; at: string };

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied';

export interface DeviceAuthorizationState {
  exists: boolean;
  deviceSecretHash: string | null;
  clientName: string | null;
  interval: number;
  expiresAt: string | null;
  status: DeviceAuthorizationStatus;
  /** Who approved or denied it. */
  decidedBy: string | null;
  redeemedTokenId: string | null;
}

export const deviceAuthorizationStreamId = (deviceId: string) => `devicecode-${deviceId}`;

const isExpired = (state: DeviceAuthorizationState, at: string) => Date.parse(at) >= Date.parse(state.expiresAt!);

function assertUndecided(state: DeviceAuthorizationState, at: string): void {
  if (!state.exists) throw new DomainError('DEVICE_CODE_NOT_FOUND', 'no device authorization has this user code', 'not_found');
  // A decided code is finished whatever its age; say so rather than "expired".
  if (state.status !== 'pending') {
    throw new DomainError('DEVICE_CODE_ALREADY_DECIDED', `this device authorization was already ${state.status}`, 'conflict', { status: state.status });
  }
  if (isExpired(state, at)) {
    throw new DomainError('DEVICE_CODE_EXPIRED', 'this user code has expired; start the login again from the CLI', 'gone');
  }
}

export const deviceAuthorizationDecider: Decider<DeviceAuthorizationCommand, DeviceAuthorizationState, DeviceAuthorizationEvent> = {
  initialState: {
    exists: false,
    deviceSecretHash: null,
    clientName: null,
    interval: 0,
    expiresAt: null,
    status: 'pending',
    decidedBy: null,
    redeemedTokenId: null,
  },
  eventSchemas: deviceAuthorizationEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'DeviceAuthorizationRequested':
        return {
          ...state,
          exists: true,
          deviceSecretHash: event.data.deviceSecretHash,
          clientName: event.data.clientName,
          interval: event.data.interval,
          expiresAt: event.data.expiresAt,
        };
      case 'DeviceAuthorizationApproved':
        return { ...state, status: 'approved', decidedBy: event.data.userId };
      case 'DeviceAuthorizationDenied':
        return { ...state, status: 'denied', decidedBy: event.data.userId };
      case 'DeviceAuthorizationRedeemed':
        return { ...state, redeemedTokenId: event.data.tokenId };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'RequestDeviceAuthorization': {
        if (state.exists) throw new DomainError('DEVICE_CODE_EXISTS', `device authorization ${command.deviceId} already exists`, 'conflict');
        if (Date.parse(command.expiresAt) <= Date.parse(command.at)) throw new Error('a device authorization must expire after it is requested');
        const { deviceId, deviceSecretHash, userCodeHash, clientName, interval, at, expiresAt } = command;
        return [
          {
            type: 'DeviceAuthorizationRequested',
            data: { deviceId, deviceSecretHash, userCodeHash, clientName, interval, requestedAt: at, expiresAt },
          },
        ];
      }
      case 'ApproveDeviceAuthorization':
        assertUndecided(state, command.at);
        return [{ type: 'DeviceAuthorizationApproved', data: { userId: command.userId, approvedAt: command.at } }];
      case 'DenyDeviceAuthorization':
        assertUndecided(state, command.at);
        return [{ type: 'DeviceAuthorizationDenied', data: { userId: command.userId, deniedAt: command.at } }];
      case 'RedeemDeviceAuthorization': {
        // The same rules as polling, so a redemption racing another one answers like the poll would.
        const decision = decidePoll(state, command.at, null);
        if (decision.answer !== 'issue_token') throw deviceTokenError(decision.answer, decision.interval);
        return [{ type: 'DeviceAuthorizationRedeemed', data: { tokenId: command.tokenId, redeemedAt: command.at } }];
      }
    }
  },
};
