import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

const isoTime = z.string().datetime({ offset: true });

/**
 * A CLI token, stream `clitoken-<tokenId>`: a bearer credential `fcli_<tokenId>.<secret>` for one
 * user, created by hand or by redeeming a device authorization; only the secret's SHA-256 is kept.
 */
export const cliTokenNameSchema = z.string().trim().min(1).max(100);
export const cliTokenSources = ['device', 'manual'] as const;
export type CliTokenSource = (typeof cliTokenSources)[number];

export const cliTokenEventSchemas = {
  CliTokenCreated: z.object({
    tokenId: z.string().min(1),
    userId: z.string().min(1),
    name: cliTokenNameSchema.nullable(),
    secretHash: z.string().regex(/^[0-9a-f]{64}$/),
    source: z.enum(cliTokenSources),
    /** The device authorization it was issued for (source `device`). */
    deviceId: z.string().min(1).nullable(),
    createdAt: isoTime,
    expiresAt: isoTime,
  }),
  CliTokenRevoked: z.object({ tokenId: z.string().min(1), revokedBy: z.string().min(1), revokedAt: isoTime }),
};

export type CliTokenEvent = EventsOf<typeof cliTokenEventSchemas>;

/**
 * One device authorization of the OAuth 2.0 device flow (RFC 8628), stream `devicecode-<deviceId>`:
 * requested by a CLI, approved or denied by a signed-in user on the web, redeemed for a CLI token
 * exactly once. Only hashes of the device secret and of the user code are recorded.
 */
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);
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

export type DeviceAuthorizationEvent = EventsOf<typeof deviceAuthorizationEventSchemas>;
