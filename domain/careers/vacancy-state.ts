import type { FormField, VacancyEvent, VacancyStatus } from './vacancy-events.js';

export interface VacancyState {
  exists: boolean;
  vacancyId: string;
  orgId: string;
  title: string;
  description: string;
  status: VacancyStatus;
  formFields: FormField[];
  createdAt: string;
  updatedAt: string;
  /** Revision of the stream's last event (-1 before the first): the vacancy's `version`, ETag and If-Match. */
  version: number;
}

export const initialVacancyState: VacancyState = {
  exists: false, vacancyId: '', orgId: '', title: '', description: '', status: 'open', formFields: [], createdAt: '', updatedAt: '', version: -1,
};

export function evolveVacancy(state: VacancyState, event: VacancyEvent): VacancyState {
  const next = { ...state, version: state.version + 1 };
  switch (event.type) {
    case 'VacancyCreated': {
      const d = event.data;
      return { ...next, exists: true, vacancyId: d.vacancyId, orgId: d.orgId, title: d.title, description: d.description, status: d.status, formFields: d.formFields, createdAt: d.at, updatedAt: d.at };
    }
    case 'VacancyUpdated': {
      const d = event.data;
      return { ...next, title: d.title ?? state.title, description: d.description ?? state.description, formFields: d.formFields ?? state.formFields, updatedAt: d.at };
    }
    case 'VacancyClosed':
      return { ...next, status: 'closed', updatedAt: event.data.at };
    case 'VacancyReopened':
      return { ...next, status: 'open', updatedAt: event.data.at };
    default:
      return next;
  }
}
