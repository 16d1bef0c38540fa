import { DomainError } from '../shared/decider.js';
import { decidePoll, deviceTokenError } from './device-poll.js';
import type { DeviceAuthorizationEvent } from './events.js';
import type { DeviceAuthorizationState } from './state-device-authorization.js';

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

export function decideDeviceAuthorization(command: DeviceAuthorizationCommand, state: DeviceAuthorizationState): DeviceAuthorizationEvent[] {
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
}
