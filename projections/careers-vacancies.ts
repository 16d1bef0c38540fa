import type { RecordedEvent } from '../domain/shared/events.js';
import { VACANCY_CATEGORY, type FormField, type VacancyEvent, type VacancyStatus } from '../domain/careers/index.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

/** A vacancy as lists show it: everything its events say (nothing in it is personal). */
export interface VacancyView extends Doc {
  orgId: string;
  title: string;
  description: string;
  status: VacancyStatus;
  formFields: FormField[];
  createdAt: string;
  updatedAt: string;
  version: number;
}

const COLLECTION = 'careers_vacancies';

export const careersVacanciesProjector: Projector = {
  name: 'careers-vacancies',
  categories: [VACANCY_CATEGORY],
  // The public list pins organization and status; the members' list the organization (and status when asked).
  ...ownedCollections({ [COLLECTION]: [{ keys: { orgId: 1, status: 1, createdAt: -1 } }, { keys: { orgId: 1, createdAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & VacancyEvent;
    const vacancies = store.collection<VacancyView>(COLLECTION);
    const id = recorded.streamId.slice(`${VACANCY_CATEGORY}-`.length);
    // `version < revision`: a redelivered event (at least once on Kafka) changes nothing twice.
    const later = { _id: id, version: { $lt: recorded.revision } };
    switch (event.type) {
      case 'VacancyCreated': {
        const d = event.data;
        await vacancies.replaceOne(
          { _id: id },
          { _id: id, orgId: d.orgId, title: d.title, description: d.description, status: d.status, formFields: d.formFields, createdAt: d.at, updatedAt: d.at, version: recorded.revision },
          { upsert: true },
        );
        return;
      }
      case 'VacancyUpdated': {
        const { by: _by, at, ...changes } = event.data;
        await vacancies.updateOne(later, { $set: { ...changes, updatedAt: at, version: recorded.revision } });
        return;
      }
      case 'VacancyClosed':
      case 'VacancyReopened':
        await vacancies.updateOne(later, { $set: { status: event.type === 'VacancyClosed' ? 'closed' : 'open', updatedAt: event.data.at, version: recorded.revision } });
        return;
    }
  },
};

/** One vacancy; with `orgId`, only if it is that organization's (another's is not found). */
export function getVacancy(store: ReadStore, vacancyId: string, orgId?: string): Promise<VacancyView | null> {
  return store.collection<VacancyView>(COLLECTION).findOne(orgId === undefined ? { _id: vacancyId } : { _id: vacancyId, orgId });
}

/** An organization's vacancies, newest first; `status` narrows them (the public list asks for `open`). */
export function listVacancies(store: ReadStore, filter: { orgId: string; status?: VacancyStatus }, limit: number, cursor: string | null) {
  const where = { orgId: filter.orgId, ...(filter.status ? { status: filter.status } : {}) };
  return store.collection<VacancyView>(COLLECTION).page(where, { sort: { createdAt: -1 }, limit, cursor });
}
