import type { ApplicationStatus, CareerEvent } from './events.js';

export interface ApplicationState {
  exists: boolean;
  deleted: boolean;
  /** Between ApplicationDeletionStarted and ApplicationDeleted: who asked and why (the finishing event repeats them). */
  deleting: { by: string; reason: string | null } | null;
  orgId: string | null;
  status: ApplicationStatus | null;
  dedupeKey: string | null;
  cvKey: string | null;
}

export const initialApplicationState: ApplicationState = { exists: false, deleted: false, deleting: null, orgId: null, status: null, dedupeKey: null, cvKey: null };

export function evolveApplication(state: ApplicationState, event: CareerEvent): ApplicationState {
  switch (event.type) {
    case 'ApplicationReceived':
      return { exists: true, deleted: false, deleting: null, orgId: event.data.orgId, status: 'received', dedupeKey: event.data.dedupeKey, cvKey: event.data.cv.key };
    case 'ApplicationStatusChanged':
      return { ...state, status: event.data.to };
    case 'ApplicationDeletionStarted':
      return { ...state, deleting: { by: event.data.by, reason: event.data.reason } };
    case 'ApplicationDeleted':
      return { ...state, deleted: true, deleting: null };
    default:
      return state;
  }
}

/** The duplicate check of one (organization, vacancy, email): who applied first, and when. */
export interface DedupeState {
  applicationId: string | null;
  at: string | null;
}

export const initialDedupeState: DedupeState = { applicationId: null, at: null };

export function evolveDedupe(state: DedupeState, event: CareerEvent): DedupeState {
  switch (event.type) {
    case 'ApplicationDedupeClaimed':
      return { applicationId: event.data.applicationId, at: event.data.at };
    case 'ApplicationDedupeReleased':
      return state.applicationId === event.data.applicationId ? initialDedupeState : state;
    default:
      return state;
  }
}
