import type { DeviceAuthorizationEvent } from './events.js';

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

export const initialDeviceAuthorizationState: DeviceAuthorizationState = {
  exists: false,
  deviceSecretHash: null,
  clientName: null,
  interval: 0,
  expiresAt: null,
  status: 'pending',
  decidedBy: null,
  redeemedTokenId: null,
};

export function evolveDeviceAuthorization(state: DeviceAuthorizationState, event: DeviceAuthorizationEvent): DeviceAuthorizationState {
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
}
