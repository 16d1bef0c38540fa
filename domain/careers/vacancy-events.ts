import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of a vacancy (README "Limits"): small enough for one event, large enough for a real posting. */
export const VACANCY_TITLE_MAX = 200;
export const VACANCY_DESCRIPTION_MAX = 20_000;
export const VACANCY_FORM_FIELDS_MAX = 20;
export const FORM_FIELD_LABEL_MAX = 200;

export const VACANCY_STATUSES = ['open', 'closed'] as const;
export const vacancyStatusSchema = z.enum(VACANCY_STATUSES);
export type VacancyStatus = z.infer<typeof vacancyStatusSchema>;

/** What an extra question accepts: each type has its own check and length bound (vacancy-apply.ts). */
export const FORM_FIELD_TYPES = ['text', 'textarea', 'url', 'email', 'number'] as const;

/**
 * An extra question of the application form. `name` is the key of its answer (`answers.<name>`), so it
 * is a short identifier; the label is what the applicant reads.
 */
export const formFieldSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'a lowercase identifier: a letter, then letters, digits or "_", at most 40'),
  label: z.string().trim().min(1).max(FORM_FIELD_LABEL_MAX),
  required: z.boolean().default(false),
  type: z.enum(FORM_FIELD_TYPES).default('text'),
});
export type FormField = z.infer<typeof formFieldSchema>;

/** The questions of one vacancy: at most 20, each name once (the duplicate is named by its index). */
export const formFieldsSchema = z
  .array(formFieldSchema)
  .max(VACANCY_FORM_FIELDS_MAX)
  .superRefine((fields, ctx) => {
    const seen = new Set<string>();
    fields.forEach((f, i) => {
      if (seen.has(f.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${f.name}" is already a question of this vacancy` });
      seen.add(f.name);
    });
  });

export const vacancyTitleSchema = z.string().trim().min(1).max(VACANCY_TITLE_MAX);
export const vacancyDescriptionSchema = z.string().max(VACANCY_DESCRIPTION_MAX);

/**
 * Events of `vacancy-<id>`: an organization's job posting. Nothing personal is in them (applicants'
 * answers live in their application's sealed `personal`), so they stay in clear.
 */
export const vacancyEventSchemas = {
  VacancyCreated: z.object({
    vacancyId: z.string(),
    orgId: z.string(),
    title: z.string(),
    description: z.string(),
    status: vacancyStatusSchema,
    formFields: z.array(formFieldSchema),
    by: z.string(),
    at: z.string(),
  }),
  /** Only what changed; `formFields` replaces the whole list. */
  VacancyUpdated: z.object({
    title: z.string().optional(),
    description: z.string().optional(),
    formFields: z.array(formFieldSchema).optional(),
    by: z.string(),
    at: z.string(),
  }),
  /** No more applications (409 VACANCY_CLOSED); those received stay. */
  VacancyClosed: z.object({ by: z.string(), at: z.string() }),
  VacancyReopened: z.object({ by: z.string(), at: z.string() }),
};

export type VacancyEvent = EventsOf<typeof vacancyEventSchemas>;

export const VACANCY_CATEGORY = 'vacancy';
export const vacancyStreamId = (vacancyId: string) => `${VACANCY_CATEGORY}-${vacancyId}`;
