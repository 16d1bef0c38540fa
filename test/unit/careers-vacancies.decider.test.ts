import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import {
  applicationOrgOf, checkAnswers, formFieldsSchema, initialVacancyState, vacancyDecider,
  type FormField, type VacancyEvent,
} from '../../domain/careers/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const fields: FormField[] = [
  { name: 'github', label: 'Your GitHub profile', required: true, type: 'url' },
  { name: 'notice', label: 'Notice period (weeks)', required: false, type: 'number' },
];
const created: VacancyEvent = {
  type: 'VacancyCreated',
  data: { vacancyId: 'v1', orgId: 'o1', title: 'Backend engineer', description: 'Queues.', status: 'open', formFields: fields, by: 'u1', at },
};
const closed: VacancyEvent = { type: 'VacancyClosed', data: { by: 'u1', at: later } };

describe('careers: vacancy decider', () => {
  const spec = deciderSpec(vacancyDecider);

  it('creates a vacancy once, open or closed as asked', () => {
    const create = { type: 'CreateVacancy' as const, vacancyId: 'v1', orgId: 'o1', title: 'Backend engineer', description: 'Queues.', status: 'open' as const, formFields: fields, by: 'u1', at };
    spec.given([]).when(create).then([created]);
    spec.given([created]).when(create).thenThrows('VACANCY_ALREADY_EXISTS', 'conflict');
    const draft = spec.given([]).when({ ...create, status: 'closed' }).events();
    expect(spec.stateOf(draft)).to.include({ status: 'closed', version: 0 });
    const state = spec.stateOf([created]);
    expect(state).to.include({ exists: true, orgId: 'o1', status: 'open', version: 0, title: 'Backend engineer' });
    expect(spec.stateOf([created, closed])).to.include({ status: 'closed', version: 1, updatedAt: later });
  });

  it('records only what an update changes, and nothing when nothing changed', () => {
    const update = { type: 'UpdateVacancy' as const, orgId: 'o1', by: 'u2', at: later };
    spec.given([created]).when({ ...update, title: 'Backend engineer', description: 'Queues and logs.' }).then([
      { type: 'VacancyUpdated', data: { description: 'Queues and logs.', by: 'u2', at: later } },
    ]);
    spec.given([created]).when({ ...update, title: 'Backend engineer', formFields: fields }).then([]);
    spec.given([created]).when({ ...update, formFields: [] }).then([{ type: 'VacancyUpdated', data: { formFields: [], by: 'u2', at: later } }]);
    const after = spec.stateOf([created, { type: 'VacancyUpdated', data: { formFields: [], by: 'u2', at: later } }]);
    expect(after).to.include({ title: 'Backend engineer', description: 'Queues.', version: 1 });
    expect(after.formFields).to.deep.equal([]);
  });

  it('closes and reopens; repeating either appends nothing', () => {
    spec.given([created]).when({ type: 'CloseVacancy', orgId: 'o1', by: 'u1', at: later }).then([closed]);
    spec.given([created, closed]).when({ type: 'CloseVacancy', orgId: 'o1', by: 'u1', at: later }).then([]);
    spec.given([created, closed]).when({ type: 'ReopenVacancy', orgId: 'o1', by: 'u1', at: later }).then([{ type: 'VacancyReopened', data: { by: 'u1', at: later } }]);
    spec.given([created]).when({ type: 'ReopenVacancy', orgId: 'o1', by: 'u1', at: later }).then([]);
  });

  it("hides another organization's vacancy and an unknown one (404, not 403)", () => {
    for (const command of [
      { type: 'UpdateVacancy' as const, orgId: 'o2', title: 'x', by: 'u9', at },
      { type: 'CloseVacancy' as const, orgId: 'o2', by: 'u9', at },
      { type: 'ReopenVacancy' as const, orgId: 'o2', by: 'u9', at },
    ]) {
      spec.given([created]).when(command).thenThrows('VACANCY_NOT_FOUND', 'not_found');
      spec.given([]).when({ ...command, orgId: 'o1' }).thenThrows('VACANCY_NOT_FOUND', 'not_found');
    }
  });
});

describe('careers: applying to a vacancy', () => {
  const spec = deciderSpec(vacancyDecider);
  const open = spec.stateOf([created]);
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      return err as DomainError;
    }
    return expect.fail('expected a refusal') as never;
  };

  it('goes to the vacancy\'s organization; a named organization must agree', () => {
    expect(applicationOrgOf(open, null)).to.equal('o1');
    expect(applicationOrgOf(open, 'o1')).to.equal('o1');
    const mismatch = code(() => applicationOrgOf(open, 'o2'));
    expect(mismatch.code).to.equal('VACANCY_ORG_MISMATCH');
    expect(mismatch.kind).to.equal('invalid');
    expect(mismatch.details).to.deep.equal({ field: 'body.orgId' });
  });

  it('refuses an unknown vacancy (404) and a closed one (409)', () => {
    expect(code(() => applicationOrgOf(initialVacancyState, null))).to.include({ code: 'VACANCY_NOT_FOUND', kind: 'not_found' });
    expect(code(() => applicationOrgOf(spec.stateOf([created, closed]), null))).to.include({ code: 'VACANCY_CLOSED', kind: 'conflict' });
    expect(applicationOrgOf(spec.stateOf([created, closed, { type: 'VacancyReopened', data: { by: 'u1', at } }]), null)).to.equal('o1');
  });

  it('checks answers: required ones, their types, and no answer to a question not asked, each named', () => {
    expect(checkAnswers(fields, { github: ' https://github.com/jane ', notice: '' })).to.deep.equal({ github: 'https://github.com/jane' });
    expect(checkAnswers(fields, { github: 'https://github.com/jane', notice: '4' })).to.deep.equal({ github: 'https://github.com/jane', notice: '4' });
    const missing = code(() => checkAnswers(fields, { notice: '2' }));
    expect(missing.code).to.equal('VALIDATION_FAILED');
    expect((missing.details as any).fields.map((f: any) => f.field)).to.deep.equal(['body.answers.github']);
    const bad = code(() => checkAnswers(fields, { github: 'javascript:alert(1)', notice: 'soon', salary: '1' }));
    expect((bad.details as any).fields.map((f: any) => f.field)).to.deep.equal(['body.answers.salary', 'body.answers.github', 'body.answers.notice']);
    const textFields: FormField[] = [
      { name: 'email2', label: 'Other email', required: false, type: 'email' },
      { name: 'why', label: 'Why us', required: true, type: 'textarea' },
      { name: 'city', label: 'City', required: false, type: 'text' },
    ];
    expect(checkAnswers(textFields, { why: 'x'.repeat(10_000), city: 'Lyon' })).to.have.keys(['why', 'city']);
    const long = code(() => checkAnswers(textFields, { why: 'ok', city: 'x'.repeat(1001), email2: 'nope' }));
    expect((long.details as any).fields.map((f: any) => f.field)).to.deep.equal(['body.answers.email2', 'body.answers.city']);
  });

  it('validates a vacancy\'s questions: identifiers, at most 20, each name once', () => {
    expect(formFieldsSchema.parse([{ name: 'github', label: 'GitHub' }])).to.deep.equal([{ name: 'github', label: 'GitHub', required: false, type: 'text' }]);
    const dup = formFieldsSchema.safeParse([{ name: 'a', label: 'A' }, { name: 'a', label: 'B' }]);
    expect(dup.success).to.equal(false);
    expect(dup.error!.issues.map((i) => i.path.join('.'))).to.deep.equal(['1.name']);
    expect(formFieldsSchema.safeParse([{ name: 'Has Space', label: 'x' }]).success).to.equal(false);
    expect(formFieldsSchema.safeParse([{ name: 'a', label: 'x', type: 'file' }]).success).to.equal(false);
    expect(formFieldsSchema.safeParse(Array.from({ length: 21 }, (_, i) => ({ name: `q${i}`, label: 'x' }))).success).to.equal(false);
  });
});
