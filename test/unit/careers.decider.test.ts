import { expect } from 'chai';
import { ALLOWED_TRANSITIONS, APPLICATION_STATUSES, applicationDecider, applicationDedupeDecider, type CareerEvent } from '../../domain/careers/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const cv = { key: 'careers/o1/a1/cv.pdf', size: 10, sha256: 'ab', contentType: 'application/pdf', pages: 1, textStatus: 'ok' as const };
const dedupeKey = 'a'.repeat(64);
const received: CareerEvent = {
  type: 'ApplicationReceived',
  data: { applicationId: 'a1', orgId: 'o1', vacancyId: 'v1', personal: 'p1.x.y.z', cv, dedupeKey, receivedAt: at },
};
const moved = (from: string, to: string): CareerEvent => ({ type: 'ApplicationStatusChanged', data: { from, to, note: null, by: 'u1', at } as never });

describe('careers: application decider', () => {
  const spec = deciderSpec(applicationDecider);

  it('receives an application once (a retried submission appends nothing)', () => {
    const submit = { type: 'SubmitApplication' as const, applicationId: 'a1', orgId: 'o1', vacancyId: 'v1', personal: 'p1.x.y.z', cv, dedupeKey, at };
    spec.given([]).when(submit).then([received]);
    spec.given([received]).when(submit).then([]);
  });

  it('allows exactly the documented transitions, each an event with who and why', () => {
    for (const from of APPLICATION_STATUSES) {
      const history = from === 'received' ? [received] : [received, moved('received', from)];
      for (const to of APPLICATION_STATUSES) {
        const command = { type: 'ChangeApplicationStatus' as const, orgId: 'o1', to, note: 'why', by: 'u1', at };
        if (to === from) spec.given(history).when(command).then([]);
        else if (ALLOWED_TRANSITIONS[from].includes(to)) spec.given(history).when(command).then([{ type: 'ApplicationStatusChanged', data: { from, to, note: 'why', by: 'u1', at } }]);
        else spec.given(history).when(command).thenThrows('INVALID_STATUS_TRANSITION');
      }
    }
    expect(ALLOWED_TRANSITIONS.hired).to.deep.equal([]);
    expect(ALLOWED_TRANSITIONS.withdrawn).to.deep.equal([]);
  });

  it("hides another organization's application and a deleted one", () => {
    spec.given([received]).when({ type: 'ChangeApplicationStatus', orgId: 'o2', to: 'screening', note: null, by: 'u2', at }).thenThrows('APPLICATION_NOT_FOUND');
    spec.given([received]).when({ type: 'DeleteApplication', orgId: 'o2', reason: null, by: 'u2', at }).thenThrows('APPLICATION_NOT_FOUND');
    const started: CareerEvent = { type: 'ApplicationDeletionStarted', data: { by: 'u1', reason: 'asked', at } };
    const deleted: CareerEvent = { type: 'ApplicationDeleted', data: { by: 'u1', reason: 'asked', at } };
    spec.given([received, started, deleted]).when({ type: 'DeleteApplication', orgId: 'o1', reason: null, by: 'u1', at }).then([]);
    spec.given([received, started, deleted]).when({ type: 'ChangeApplicationStatus', orgId: 'o1', to: 'screening', note: null, by: 'u1', at }).thenThrows('APPLICATION_NOT_FOUND');
    spec.given([received, started, deleted]).when({ type: 'DeleteApplication', orgId: 'o2', reason: null, by: 'u2', at }).thenThrows('APPLICATION_NOT_FOUND');
  });

  it('deletes in two steps: started, then (after the key, the file and the claim are gone) deleted; a retry appends nothing new', () => {
    const started: CareerEvent = { type: 'ApplicationDeletionStarted', data: { by: 'u1', reason: 'asked', at } };
    const deleted: CareerEvent = { type: 'ApplicationDeleted', data: { by: 'u1', reason: 'asked', at } };
    spec.given([received]).when({ type: 'DeleteApplication', orgId: 'o1', reason: 'asked', by: 'u1', at }).then([started]);
    spec.given([received]).when({ type: 'FinishApplicationDeletion', at }).then([]);
    // Interrupted halfway: the DELETE repeated appends nothing; the finish closes it with who and why of the start.
    spec.given([received, started]).when({ type: 'DeleteApplication', orgId: 'o1', reason: null, by: 'u2', at }).then([]);
    spec.given([received, started]).when({ type: 'FinishApplicationDeletion', at }).then([deleted]);
    spec.given([received, started, deleted]).when({ type: 'FinishApplicationDeletion', at }).then([]);
    spec.given([received, started]).when({ type: 'DeleteApplication', orgId: 'o2', reason: null, by: 'u2', at }).thenThrows('APPLICATION_NOT_FOUND');
    spec.given([received, started]).when({ type: 'ChangeApplicationStatus', orgId: 'o1', to: 'screening', note: null, by: 'u1', at }).thenThrows('APPLICATION_BEING_DELETED');
  });
});

describe('careers: duplicate check decider', () => {
  const spec = deciderSpec(applicationDedupeDecider);
  const day = 24 * 3600 * 1000;
  const claimed: CareerEvent = { type: 'ApplicationDedupeClaimed', data: { applicationId: 'a1', at } };

  it('keeps the first application for 24 hours, then accepts a new one', () => {
    spec.given([]).when({ type: 'ClaimApplication', applicationId: 'a1', windowMs: day, at }).then([claimed]);
    const later = new Date(Date.parse(at) + day - 1000).toISOString();
    spec.given([claimed]).when({ type: 'ClaimApplication', applicationId: 'a2', windowMs: day, at: later }).then([]);
    expect(spec.stateOf([claimed]).applicationId).to.equal('a1');
    const dayAfter = new Date(Date.parse(at) + day).toISOString();
    spec.given([claimed]).when({ type: 'ClaimApplication', applicationId: 'a2', windowMs: day, at: dayAfter }).then([{ type: 'ApplicationDedupeClaimed', data: { applicationId: 'a2', at: dayAfter } }]);
  });

  it('is freed when the first application is deleted', () => {
    const released: CareerEvent = { type: 'ApplicationDedupeReleased', data: { applicationId: 'a1', at } };
    spec.given([claimed]).when({ type: 'ReleaseApplication', applicationId: 'a1', at }).then([released]);
    spec.given([claimed]).when({ type: 'ReleaseApplication', applicationId: 'other', at }).then([]);
    spec.given([claimed, released]).when({ type: 'ClaimApplication', applicationId: 'a2', windowMs: day, at }).then([{ type: 'ApplicationDedupeClaimed', data: { applicationId: 'a2', at } }]);
  });
});
