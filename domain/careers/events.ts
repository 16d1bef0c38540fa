import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

export const APPLICATION_STATUSES = ['received', 'screening', 'interview', 'offer', 'hired', 'rejected', 'withdrawn'] as const;
export const applicationStatusSchema = z.enum(APPLICATION_STATUSES);
export type ApplicationStatus = z.infer<typeof applicationStatusSchema>;

/** What is known of the CV file without reading personal data: where it is, how large, how much text it gave. */
export const cvFileSchema = z.object({
  key: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  contentType: z.string(),
  pages: z.number().int().nonnegative(),
  /** `no_text`: an image-only (scanned) CV, accepted without text. */
  textStatus: z.enum(['ok', 'no_text']),
  /**
   * `pd1`: the stored object is the CV sealed under the application's key (AES-256-GCM, the
   * application id as AAD), so shredding the key shreds the file in every copy; `size` and `sha256`
   * stay those of the PDF itself. Absent on CVs stored in clear before (still served as they are).
   */
  sealed: z.literal('pd1').optional(),
});
export type CvFile = z.infer<typeof cvFileSchema>;

/**
 * Events of `application-<id>`. Personal fields (name, email, cover letter, CV text and file name)
 * are only ever in `personal`: sealed under the application's own key, which lives outside the log
 * and is dropped on deletion (crypto-shredding).
 */
export const careerEventSchemas = {
  ApplicationReceived: z.object({
    applicationId: z.string(),
    orgId: z.string(),
    vacancyId: z.string(),
    /** Sealed JSON of the personal fields (PersonalDataVault). */
    personal: z.string().startsWith('p1.'),
    cv: cvFileSchema,
    /** Keyed hash of org, vacancy and email (the duplicate check's stream); not reversible without the service key. */
    dedupeKey: z.string().regex(/^[0-9a-f]{64}$/),
    receivedAt: z.string(),
  }),
  ApplicationStatusChanged: z.object({
    from: applicationStatusSchema,
    to: applicationStatusSchema,
    note: z.string().nullable(),
    by: z.string(),
    at: z.string(),
  }),
  /**
   * A DELETE began: the key, the CV file and the duplicate claim are removed next, then
   * ApplicationDeleted closes it. Until then the application is listed with `deleting: true`, and
   * repeating the DELETE finishes the steps (each idempotent) after a crash halfway.
   */
  ApplicationDeletionStarted: z.object({ by: z.string(), reason: z.string().nullable(), at: z.string() }),
  /** The deletion finished (key shredded, CV file removed, duplicate check freed): gone from the list. */
  ApplicationDeleted: z.object({ by: z.string(), reason: z.string().nullable(), at: z.string() }),
  // Stream `applicationdedupe-<dedupeKey>`: the first application of an email to a vacancy within the window.
  ApplicationDedupeClaimed: z.object({ applicationId: z.string(), at: z.string() }),
  ApplicationDedupeReleased: z.object({ applicationId: z.string(), at: z.string() }),
};

export type CareerEvent = EventsOf<typeof careerEventSchemas>;

export const applicationStreamId = (applicationId: string) => `application-${applicationId}`;
export const applicationDedupeStreamId = (dedupeKey: string) => `applicationdedupe-${dedupeKey}`;
export const APPLICATION_CATEGORY = 'application';
