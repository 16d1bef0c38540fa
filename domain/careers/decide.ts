import { DomainError, decideByType } from '../shared/decider.js';
import type { ApplicationStatus, CareerEvent, CvFile } from './events.js';
import type { ApplicationState, DedupeState } from './state.js';

/**
 * Allowed status changes. Terminal: hired, withdrawn. A rejection may be reconsidered (back to
 * screening); anyone not yet hired may withdraw or be rejected. Setting the current status again is
 * a no-op (no event).
 */
export const ALLOWED_TRANSITIONS: Record<ApplicationStatus, ApplicationStatus[]> = {
  received: ['screening', 'rejected', 'withdrawn'],
  screening: ['interview', 'rejected', 'withdrawn'],
  interview: ['offer', 'rejected', 'withdrawn'],
  offer: ['hired', 'rejected', 'withdrawn'],
  hired: [],
  rejected: ['screening'],
  withdrawn: [],
};

export type ApplicationCommand =
  | { type: 'SubmitApplication'; applicationId: string; orgId: string; vacancyId: string; personal: string; cv: CvFile; dedupeKey: string; at: string }
  /** `orgId`: the caller's organization; another's application is not found. */
  | { type: 'ChangeApplicationStatus'; orgId: string; to: ApplicationStatus; note: string | null; by: string; at: string }
  | { type: 'DeleteApplication'; orgId: string; reason: string | null; by: string; at: string }
  /** After the key, the file and the duplicate claim were removed: closes a deletion begun by DeleteApplication. */
  | { type: 'FinishApplicationDeletion'; at: string };

const notFound = () => new DomainError('APPLICATION_NOT_FOUND', 'application not found', 'not_found');

function visible(state: ApplicationState, orgId: string) {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw notFound();
  if (state.deleting) {
    throw new DomainError('APPLICATION_BEING_DELETED', 'this application is being deleted; repeat the DELETE to finish it', 'conflict');
  }
}

export const decideApplication = decideByType<ApplicationCommand, ApplicationState, CareerEvent>({
  SubmitApplication: (c, state) => {
    if (state.exists) return []; // the same submission retried
    return [
      {
        type: 'ApplicationReceived',
        data: { applicationId: c.applicationId, orgId: c.orgId, vacancyId: c.vacancyId, personal: c.personal, cv: c.cv, dedupeKey: c.dedupeKey, receivedAt: c.at },
      },
    ];
  },
  ChangeApplicationStatus: (c, state) => {
    visible(state, c.orgId);
    const from = state.status!;
    if (from === c.to) return [];
    const allowed = ALLOWED_TRANSITIONS[from];
    if (!allowed.includes(c.to)) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `an application cannot go from ${from} to ${c.to}`, 'conflict', { field: 'body.status', from, to: c.to, allowed });
    }
    return [{ type: 'ApplicationStatusChanged', data: { from, to: c.to, note: c.note, by: c.by, at: c.at } }];
  },
  DeleteApplication: (c, state) => {
    // Deleting again appends nothing: the caller repeats the (idempotent) removal steps, so a retry
    // after a crash halfway finishes the job.
    if ((state.deleted || state.deleting) && state.exists && state.orgId === c.orgId) return [];
    visible(state, c.orgId);
    return [{ type: 'ApplicationDeletionStarted', data: { by: c.by, reason: c.reason, at: c.at } }];
  },
  FinishApplicationDeletion: (c, state) => {
    if (!state.deleting) return [];
    return [{ type: 'ApplicationDeleted', data: { by: state.deleting.by, reason: state.deleting.reason, at: c.at } }];
  },
});

export type DedupeCommand =
  /** Claims the (org, vacancy, email) for `applicationId` unless another application claimed it less than `windowMs` ago. */
  | { type: 'ClaimApplication'; applicationId: string; windowMs: number; at: string }
  | { type: 'ReleaseApplication'; applicationId: string; at: string };

export const decideDedupe = decideByType<DedupeCommand, DedupeState, CareerEvent>({
  ClaimApplication: (c, state) => {
    if (state.applicationId === c.applicationId) return [];
    if (state.applicationId && state.at && Date.parse(c.at) - Date.parse(state.at) < c.windowMs) return [];
    return [{ type: 'ApplicationDedupeClaimed', data: { applicationId: c.applicationId, at: c.at } }];
  },
  ReleaseApplication: (c, state) => {
    if (state.applicationId !== c.applicationId) return [];
    return [{ type: 'ApplicationDedupeReleased', data: { applicationId: c.applicationId, at: c.at } }];
  },
});
