import { expect } from 'chai';
import type { CareerEvent } from '../../domain/careers/index.js';
import { careersProjector } from '../../projections/careers.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const cv = { key: 'careers/o1/a1/cv.pdf', size: 10, sha256: 'ab', contentType: 'application/pdf', pages: 1, textStatus: 'ok' as const };
const received: CareerEvent = {
  type: 'ApplicationReceived',
  data: { applicationId: 'a1', orgId: 'o1', vacancyId: 'v1', personal: 'p1.iv.tag.data', cv, dedupeKey: 'a'.repeat(64), receivedAt: at },
};
const screening: CareerEvent = { type: 'ApplicationStatusChanged', data: { from: 'received', to: 'screening', note: 'good', by: 'u1', at } };

describe('careers: applications read model', () => {
  it('keeps the personal fields sealed, and the history once per change (also after a redelivery)', async () => {
    await projectionSpec([careersProjector])
      .given([
        { streamId: 'application-a1', event: received },
        { streamId: 'application-a1', event: screening },
      ])
      .thenDocuments('careers_applications', [
        { _id: 'a1', orgId: 'o1', vacancyId: 'v1', status: 'screening', personal: 'p1.iv.tag.data', history: [screening.data], version: 1 },
      ]);
  });

  it('keeps an application whose deletion began, marked deleting, until the deletion finishes', async () => {
    await projectionSpec([careersProjector])
      .given([
        { streamId: 'application-a1', event: received },
        { streamId: 'application-a1', event: { type: 'ApplicationDeletionStarted', data: { by: 'u1', reason: null, at } } },
      ])
      .thenDocuments('careers_applications', [{ _id: 'a1', status: 'received', deleting: true, version: 1 }]);
  });

  it('drops a deleted application', async () => {
    await projectionSpec([careersProjector])
      .given([
        { streamId: 'application-a1', event: received },
        { streamId: 'application-a1', event: { type: 'ApplicationDeletionStarted', data: { by: 'u1', reason: null, at } } },
        { streamId: 'application-a1', event: { type: 'ApplicationDeleted', data: { by: 'u1', reason: null, at } } },
      ])
      .then(async (store) => {
        expect(await store.collection('careers_applications').count({})).to.equal(0);
      });
  });
});
