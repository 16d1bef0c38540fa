import { DomainError, decideByType } from '../shared/decider.js';
import type { FormField, VacancyEvent, VacancyStatus } from './vacancy-events.js';
import type { VacancyState } from './vacancy-state.js';

/**
 * Commands of a vacancy. `orgId` is the caller's active organization: another organization's vacancy
 * is not found (404, never 403), so its existence is not revealed.
 */
export type VacancyCommand =
  | { type: 'CreateVacancy'; vacancyId: string; orgId: string; title: string; description: string; status: VacancyStatus; formFields: FormField[]; by: string; at: string }
  | { type: 'UpdateVacancy'; orgId: string; title?: string; description?: string; formFields?: FormField[]; by: string; at: string }
  | { type: 'CloseVacancy'; orgId: string; by: string; at: string }
  | { type: 'ReopenVacancy'; orgId: string; by: string; at: string };

export const vacancyNotFound = () => new DomainError('VACANCY_NOT_FOUND', 'vacancy not found', 'not_found');

function visible(state: VacancyState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId) throw vacancyNotFound();
}

const sameFields = (a: FormField[], b: FormField[]) => JSON.stringify(a) === JSON.stringify(b);

export const decideVacancy = decideByType<VacancyCommand, VacancyState, VacancyEvent>({
  CreateVacancy: (c, state) => {
    // Ids are the service's own (a fresh UUID per request): an existing stream is a bug or a replay, never a second vacancy.
    if (state.exists) throw new DomainError('VACANCY_ALREADY_EXISTS', 'a vacancy with this id exists', 'conflict');
    return [{ type: 'VacancyCreated', data: { vacancyId: c.vacancyId, orgId: c.orgId, title: c.title, description: c.description, status: c.status, formFields: c.formFields, by: c.by, at: c.at } }];
  },
  UpdateVacancy: (c, state) => {
    visible(state, c.orgId);
    // Only what changed goes into the event; a PATCH that changes nothing appends nothing.
    const changes = {
      ...(c.title !== undefined && c.title !== state.title ? { title: c.title } : {}),
      ...(c.description !== undefined && c.description !== state.description ? { description: c.description } : {}),
      ...(c.formFields !== undefined && !sameFields(c.formFields, state.formFields) ? { formFields: c.formFields } : {}),
    };
    if (Object.keys(changes).length === 0) return [];
    return [{ type: 'VacancyUpdated', data: { ...changes, by: c.by, at: c.at } }];
  },
  CloseVacancy: (c, state) => {
    visible(state, c.orgId);
    return state.status === 'closed' ? [] : [{ type: 'VacancyClosed', data: { by: c.by, at: c.at } }];
  },
  ReopenVacancy: (c, state) => {
    visible(state, c.orgId);
    return state.status === 'open' ? [] : [{ type: 'VacancyReopened', data: { by: c.by, at: c.at } }];
  },
});
