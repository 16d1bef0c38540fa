import { z } from 'zod';

/**
 * The rules for account fields, shared by the HTTP schemas and the event schemas so that what
 * the API accepts and what the log may hold cannot drift apart.
 */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;
export const NAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 254;
export const AVATAR_URL_MAX_LENGTH = 2048;
export const PREFERENCES_MAX_BYTES = 16 * 1024;
export const API_KEY_NAME_MAX_LENGTH = 100;
/** Active (neither revoked nor expired) API keys one user may hold. */
export const MAX_ACTIVE_API_KEYS = 50;

/** Emails are compared case-insensitively, so they are stored lowercased and trimmed. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export const emailSchema = z
  .string()
  .trim()
  .max(EMAIL_MAX_LENGTH)
  .pipe(z.email())
  .transform(normalizeEmail);

/** Length only: long passphrases beat composition rules, and 200 bounds the scrypt input. */
export const passwordSchema = z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH);

export const nameSchema = z.string().trim().min(1).max(NAME_MAX_LENGTH);

export const avatarUrlSchema = z.url({ protocol: /^https?$/ }).max(AVATAR_URL_MAX_LENGTH);

/** Any JSON object up to 16 KiB once serialized; stored whole (a PUT replaces it). */
export const preferencesSchema = z
  .record(z.string(), z.json())
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= PREFERENCES_MAX_BYTES, {
    message: `must be at most ${PREFERENCES_MAX_BYTES} bytes as JSON`,
  });
export type Preferences = z.infer<typeof preferencesSchema>;

export const SOCIAL_PROVIDERS = ['google', 'github'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];
