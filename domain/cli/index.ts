import { decider, type Decider } from '../shared/decider.js';
import { decideCliToken, type CliTokenCommand } from './decide-cli-token.js';
import { decideDeviceAuthorization, type DeviceAuthorizationCommand } from './decide-device-authorization.js';
import { cliTokenEventSchemas, deviceAuthorizationEventSchemas, type CliTokenEvent, type DeviceAuthorizationEvent } from './events.js';
import { evolveCliToken, initialCliTokenState, type CliTokenState } from './state-cli-token.js';
import { evolveDeviceAuthorization, initialDeviceAuthorizationState, type DeviceAuthorizationState } from './state-device-authorization.js';

/**
 * The CLI context holds two aggregates: a CLI token (`clitoken-<tokenId>`) and a device
 * authorization of the OAuth 2.0 device flow (`devicecode-<deviceId>`) that is redeemed for one.
 */
export * from './events.js';
export * from './state-cli-token.js';
export * from './state-device-authorization.js';
export * from './decide-cli-token.js';
export * from './decide-device-authorization.js';
export * from './device-poll.js';
export * from './user-code.js';

export const cliTokenStreamId = (tokenId: string) => `clitoken-${tokenId}`;
export const deviceAuthorizationStreamId = (deviceId: string) => `devicecode-${deviceId}`;

export const cliTokenDecider: Decider<CliTokenCommand, CliTokenState, CliTokenEvent> = decider(initialCliTokenState, evolveCliToken, decideCliToken, cliTokenEventSchemas);

export const deviceAuthorizationDecider: Decider<DeviceAuthorizationCommand, DeviceAuthorizationState, DeviceAuthorizationEvent> = decider(initialDeviceAuthorizationState, evolveDeviceAuthorization, decideDeviceAuthorization, deviceAuthorizationEventSchemas);
