import { DomainError } from '../shared/decider.js';
import type { DeviceAuthorizationState } from './state-device-authorization.js';

/**
 * What the token endpoint answers to one poll (RFC 8628 §3.4-3.5), as a pure function of the
 * authorization's state, the time and the device's previous poll. The error codes are the RFC's
 * strings exactly (lowercase), so that CLIs can match `error.code` against them.
 */
export type DeviceTokenErrorCode = 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'invalid_grant';

/** RFC 8628 §3.5: after `slow_down` the client waits 5 s longer, and so do we when we judge it. */
export const SLOW_DOWN_INCREMENT_SECONDS = 5;

/** What the token endpoint remembers of a device between polls (not an event: polls are not worth one). */
export interface PollRecord {
  lastPollAt: string;
  /** The interval this device must now keep, in seconds (grows by 5 at each slow_down). */
  interval: number;
}

export type PollDecision =
  | { answer: 'issue_token'; userId: string; poll: null }
  /** `poll`: what to remember for the next poll; null once the answer can no longer change. */
  | { answer: DeviceTokenErrorCode; interval: number; poll: PollRecord | null };

export function decidePoll(state: DeviceAuthorizationState, at: string, last: PollRecord | null): PollDecision {
  const interval = last?.interval ?? state.interval;
  const final = (answer: DeviceTokenErrorCode): PollDecision => ({ answer, interval, poll: null });
  if (!state.exists || state.expiresAt === null) return final('invalid_grant');
  // Redeemed first: the token was handed out once and a replayed device_code gets nothing.
  if (state.redeemedTokenId !== null) return final('invalid_grant');
  if (state.status === 'denied') return final('access_denied');
  if (Date.parse(at) >= Date.parse(state.expiresAt)) return final('expired_token');
  if (state.status === 'approved') return { answer: 'issue_token', userId: state.decidedBy!, poll: null };
  // Pending: only now does the pace matter (slow_down is a kind of authorization_pending).
  if (last && Date.parse(at) - Date.parse(last.lastPollAt) < interval * 1000) {
    const slower = interval + SLOW_DOWN_INCREMENT_SECONDS;
    return { answer: 'slow_down', interval: slower, poll: { lastPollAt: at, interval: slower } };
  }
  return { answer: 'authorization_pending', interval, poll: { lastPollAt: at, interval } };
}

const MESSAGES: Record<DeviceTokenErrorCode, string> = {
  authorization_pending: 'the user has not yet approved or denied this device; keep polling at the interval',
  slow_down: 'polling too fast; add 5 seconds to your interval from now on',
  access_denied: 'the user denied this device',
  expired_token: 'the device code has expired; start the login again',
  invalid_grant: 'the device code is unknown, malformed or already used',
};

/** The error the token endpoint answers: HTTP 400, `code` = the RFC 8628 error string. */
export function deviceTokenError(code: DeviceTokenErrorCode, interval?: number): DomainError {
  const details = code === 'slow_down' || code === 'authorization_pending' ? { interval } : undefined;
  return new DomainError(code, MESSAGES[code], 'invalid', details);
}
