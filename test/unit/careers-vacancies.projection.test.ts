import { expect } from 'chai';
import type { VacancyEvent } from '../../domain/careers/index.js';
import { careersVacanciesProjector, listVacancies } from '../../projections/careers-vacancies.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const created = (vacancyId: string, orgId: string, createdAt = at): VacancyEvent => ({
  type: 'VacancyCreated',
  data: { vacancyId, orgId, title: `T ${vacancyId}`, description: 'D', status: 'open', formFields: [], by: 'u1', at: createdAt },
});

describe('careers: vacancies read model', () => {
  it('applies updates, closing and reopening once each (also after a redelivery)', async () => {
    const field = { name: 'github', label: 'GitHub', required: true, type: 'url' as const };
    await projectionSpec([careersVacanciesProjector])
      .given([
        { streamId: 'vacancy-v1', event: created('v1', 'o1') },
        { streamId: 'vacancy-v1', event: { type: 'VacancyUpdated', data: { title: 'Renamed', formFields: [field], by: 'u1', at: later } } },
        { streamId: 'vacancy-v1', event: { type: 'VacancyClosed', data: { by: 'u1', at: later } } },
      ])
      .thenDocuments('careers_vacancies', [
        { _id: 'v1', orgId: 'o1', title: 'Renamed', description: 'D', status: 'closed', formFields: [field], createdAt: at, updatedAt: later, version: 2 },
      ]);
    await projectionSpec([careersVacanciesProjector])
      .given([
        { streamId: 'vacancy-v1', event: created('v1', 'o1') },
        { streamId: 'vacancy-v1', event: { type: 'VacancyClosed', data: { by: 'u1', at } } },
        { streamId: 'vacancy-v1', event: { type: 'VacancyReopened', data: { by: 'u1', at: later } } },
      ])
      .thenDocuments('careers_vacancies', [{ _id: 'v1', status: 'open', version: 2 }]);
  });

  it("lists one organization's vacancies newest first, the open ones alone when asked", async () => {
    await projectionSpec([careersVacanciesProjector])
      .given([
        { streamId: 'vacancy-a', event: created('a', 'o1', '2026-01-01T00:00:00.000Z') },
        { streamId: 'vacancy-b', event: created('b', 'o1', '2026-01-03T00:00:00.000Z') },
        { streamId: 'vacancy-c', event: created('c', 'o2', '2026-01-04T00:00:00.000Z') },
        { streamId: 'vacancy-b', event: { type: 'VacancyClosed', data: { by: 'u1', at } } },
      ])
      .then(async (store) => {
        expect((await listVacancies(store, { orgId: 'o1' }, 10, null)).items.map((v) => v._id)).to.deep.equal(['b', 'a']);
        expect((await listVacancies(store, { orgId: 'o1', status: 'open' }, 10, null)).items.map((v) => v._id)).to.deep.equal(['a']);
        expect((await listVacancies(store, { orgId: 'o2', status: 'closed' }, 10, null)).items).to.deep.equal([]);
      });
  });
});
