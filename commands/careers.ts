import { createHash } from 'node:crypto';
import {
  applicationDecider,
  applicationDedupeDecider,
  applicationDedupeStreamId,
  applicationOrgOf,
  applicationStreamId,
  checkAnswers,
  type ApplicationStatus,
  type CvFile,
} from '../domain/careers/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { PdfReader } from '../ports/pdf-text.js';
import type { PersonalDataVault } from '../ports/personal-data.js';
import { loadVacancy } from './careers-vacancies.js';
import { handleAtContextTime, type CommandContext } from './handle.js';

export interface CareersPorts {
  eventStore: EventStore;
  objects: ObjectStore;
  pdf: PdfReader;
  vault: PersonalDataVault;
}

/** The personal fields of an application: sealed together, never in an event or a log line in clear. */
export interface ApplicantPersonalData {
  name: string;
  email: string;
  coverLetter: string | null;
  cvText: string;
  cvFilename: string;
  /** Answers to the vacancy's extra questions, by question name (absent on applications from before vacancies). */
  answers?: Record<string, string>;
}

export const DUPLICATE_WINDOW_MS = 24 * 3600 * 1000;
export const CV_MAX_BYTES = 10 * 1024 * 1024;
export const CV_MAX_PAGES = 50;
export const CV_MAX_TEXT_CHARS = 200_000;

export const cvObjectKey = (orgId: string, applicationId: string) => `careers/${orgId}/${applicationId}/cv.pdf`;
export const dedupeInput = (orgId: string, vacancyId: string, email: string) => `careers\n${orgId}\n${vacancyId}\n${email.trim().toLowerCase()}`;

/**
 * Where an application to `vacancyId` goes, decided on the vacancy's own stream (not a read model, so
 * a vacancy closed a moment ago is closed here): its organization, which `claimedOrgId` (the form's
 * `orgId` or CAREERS_ORG_ID) must agree with, and the answers to its questions, checked. Refuses
 * VACANCY_NOT_FOUND (404), VACANCY_CLOSED (409), VACANCY_ORG_MISMATCH and VALIDATION_FAILED (400).
 */
export async function vacancyForApplication(store: EventStore, vacancyId: string, claimedOrgId: string | null, answers: Record<string, string>) {
  const { state } = await loadVacancy(store, vacancyId);
  const orgId = applicationOrgOf(state, claimedOrgId);
  return { orgId, answers: checkAnswers(state.formFields, answers) };
}

export interface SubmitApplicationInput {
  applicationId: string;
  /** The vacancy's organization and the checked answers: what vacancyForApplication gave. */
  orgId: string;
  vacancyId: string;
  name: string;
  email: string;
  coverLetter: string | null;
  answers: Record<string, string>;
  cv: { bytes: Uint8Array; filename: string };
}

/**
 * Accepts an application: reads the CV's text, claims (org, vacancy, email) for 24 hours (a second
 * application within the window answers the first one's id and stores nothing), stores the file,
 * seals the personal fields under the application's own key and records ApplicationReceived.
 * A failure after the claim releases it and removes the file.
 */
export async function submitApplication(ports: CareersPorts, context: CommandContext, input: SubmitApplicationInput) {
  const { applicationId, orgId } = input;
  if (!/^%PDF-/.test(Buffer.from(input.cv.bytes.subarray(0, 1024)).toString('latin1').trimStart())) {
    throw new DomainError('CV_NOT_PDF', 'the CV must be a PDF document', 'invalid', { field: 'body.cv' });
  }
  let text: { pages: string[]; pageCount: number } = { pages: [], pageCount: 0 };
  let textStatus: CvFile['textStatus'] = 'ok';
  try {
    text = await ports.pdf.read(input.cv.bytes, { maxPages: CV_MAX_PAGES, maxChars: CV_MAX_TEXT_CHARS });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const reason = (err.details as { reason?: string } | undefined)?.reason;
    if (err.code === 'PDF_UNREADABLE' && reason === 'no_text') textStatus = 'no_text';
    else throw new DomainError(err.code, err.message, err.kind, { ...(err.details as object), field: 'body.cv' });
  }

  const dedupeKey = ports.vault.blindIndex(dedupeInput(orgId, input.vacancyId, input.email));
  const claim = await handleAtContextTime(ports.eventStore, context, applicationDedupeStreamId(dedupeKey), applicationDedupeDecider, {
    type: 'ClaimApplication',
    applicationId,
    windowMs: DUPLICATE_WINDOW_MS,
  });
  if (claim.state.applicationId !== applicationId) return { applicationId: claim.state.applicationId!, duplicate: true, position: null };

  const key = cvObjectKey(orgId, applicationId);
  try {
    // Sealed under the application's own key before it leaves the process: the object store (and its
    // backups or object versions) never holds the CV in clear, and deleting the key shreds it.
    const sealedCv = await ports.vault.sealBytes(applicationId, input.cv.bytes, applicationId);
    await ports.objects.put(key, sealedCv, { contentType: 'application/octet-stream', maxBytes: CV_MAX_BYTES + 1024 });
    const sha256 = createHash('sha256').update(input.cv.bytes).digest('hex');
    const personal: ApplicantPersonalData = {
      name: input.name,
      email: input.email,
      coverLetter: input.coverLetter,
      cvText: text.pages.join('\n\n'),
      cvFilename: input.cv.filename,
      // Sealed with the rest: the answers are the applicant's words, shredded with them.
      answers: input.answers,
    };
    const sealed = await ports.vault.seal(applicationId, JSON.stringify(personal));
    const cv: CvFile = { key, size: input.cv.bytes.length, sha256, contentType: 'application/pdf', pages: text.pageCount, textStatus, sealed: 'pd1' };
    const result = await handleAtContextTime(ports.eventStore, context, applicationStreamId(applicationId), applicationDecider, {
      type: 'SubmitApplication',
      applicationId,
      orgId,
      vacancyId: input.vacancyId,
      personal: sealed,
      cv,
      dedupeKey,
    });
    return { applicationId, duplicate: false, position: result.position };
  } catch (err) {
    await ports.objects.delete(key).catch(() => {});
    await ports.vault.shred(applicationId).catch(() => {});
    await handleAtContextTime(ports.eventStore, context, applicationDedupeStreamId(dedupeKey), applicationDedupeDecider, { type: 'ReleaseApplication', applicationId }).catch(() => {});
    throw err;
  }
}

export function changeApplicationStatus(store: EventStore, context: CommandContext, applicationId: string, to: ApplicationStatus, note: string | null) {
  return handleAtContextTime(store, context, applicationStreamId(applicationId), applicationDecider, {
    type: 'ChangeApplicationStatus',
    orgId: context.orgId ?? '',
    to,
    note,
    by: context.actorId ?? 'unknown',
  });
}

/**
 * Deletes an application in two steps: records ApplicationDeletionStarted, drops its key (the sealed
 * personal fields in the log and the sealed CV, in every copy, become unreadable for good), removes
 * the CV file, frees the duplicate check, then records ApplicationDeleted. Every step is idempotent:
 * a delete that failed halfway is finished by repeating it (the application stays listed with
 * `deleting: true` meanwhile); repeating a finished one redoes nothing harmful.
 */
export async function deleteApplication(ports: Pick<CareersPorts, 'eventStore' | 'objects' | 'vault'>, context: CommandContext, applicationId: string, reason: string | null) {
  const started = await handleAtContextTime(ports.eventStore, context, applicationStreamId(applicationId), applicationDecider, {
    type: 'DeleteApplication',
    orgId: context.orgId ?? '',
    reason,
    by: context.actorId ?? 'unknown',
  });
  // The key first: once it is gone nothing personal can be read, even if a later step fails.
  await ports.vault.shred(applicationId);
  if (started.state.cvKey) await ports.objects.delete(started.state.cvKey);
  if (started.state.dedupeKey) {
    await handleAtContextTime(ports.eventStore, context, applicationDedupeStreamId(started.state.dedupeKey), applicationDedupeDecider, { type: 'ReleaseApplication', applicationId });
  }
  return handleAtContextTime(ports.eventStore, context, applicationStreamId(applicationId), applicationDecider, { type: 'FinishApplicationDeletion' });
}
