import { expect } from 'chai';
import {
  APP_INSTANCE_LIMITS,
  APP_INSTANCE_TYPES,
  appInstanceDecider,
  applyDataOps,
  changedDataPaths,
  overlappingPaths,
  type AppInstanceEvent,
  type DataOp,
  type Json,
} from '../../domain/app-instances/index.js';
import { applyDataPatch, diffData, validateInstanceData } from '../../commands/app-instances-data.js';
import { templatePlaybook } from '../../commands/app-instances-playbook.js';
import { DomainError } from '../../domain/shared/decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const board = () => APP_INSTANCE_TYPES.kanban.initialData();
const card = (id: string, status = 'todo', extra: Record<string, Json> = {}) => ({ id, title: `Card ${id}`, status, labels: [], assignee: null, due: null, order: 10, ...extra });
const created = (data = board()): AppInstanceEvent => ({
  type: 'AppInstanceCreated',
  data: { instanceId: 'i1', type: 'kanban', name: 'Board', appId: null, ownerId: 'u1', orgId: null, workspaceId: null, data, linkedFlowIds: [], createdBy: 'u1', at },
});
const create = (over: Record<string, unknown> = {}) => ({
  type: 'CreateAppInstance' as const,
  instanceId: 'i1',
  instanceType: 'kanban',
  name: 'Board',
  appId: null,
  ownerId: 'u1',
  orgId: null,
  workspaceId: null,
  data: board(),
  linkedFlowIds: [],
  createdBy: 'u1',
  at,
  ...over,
});

function codeOf(fn: () => unknown): { code: string; kind: string; details: any } {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    const e = err as DomainError;
    return { code: e.code, kind: e.kind, details: e.details };
  }
  return expect.fail('expected a DomainError') as never;
}

describe('app instances: decider', () => {
  const spec = deciderSpec(appInstanceDecider);

  it('creates an instance once, of a known type, with data that keeps the type\'s invariants', () => {
    spec.given([]).when(create()).then([created()]);
    spec.given([created()]).when(create()).thenThrows('APP_INSTANCE_EXISTS', 'conflict');
    spec.given([]).when(create({ instanceType: 'spreadsheet' })).thenThrows('UNKNOWN_INSTANCE_TYPE', 'invalid');
    const err = spec.given([]).when(create({ data: { ...board(), cards: [card('a', 'nowhere')] } })).thenThrows('DATA_SCHEMA_VIOLATION', 'invalid');
    expect((err.details as any).fields[0]).to.deep.include({ field: 'data.cards.0.status', pointer: '/cards/0/status' });
    const dup = spec.given([]).when(create({ data: { ...board(), cards: [card('a'), card('a')] } })).thenThrows('DATA_SCHEMA_VIOLATION');
    expect((dup.details as any).fields[0].field).to.equal('data.cards.1.id');
  });

  it('refuses data over the limits: the whole data (1 MiB) and one write (768 KiB)', () => {
    const big = (bytes: number) => ({ ...board(), settings: { blob: 'x'.repeat(bytes) } });
    spec.given([]).when(create({ data: big(APP_INSTANCE_LIMITS.writeBytes) })).thenThrows('WRITE_TOO_LARGE', 'too_large');
    spec.given([]).when(create({ data: big(APP_INSTANCE_LIMITS.dataBytes) })).thenThrows('DATA_TOO_LARGE', 'too_large');
  });

  it('records a data patch as operations and folds them; a patch that breaks an invariant is refused', () => {
    const ops: DataOp[] = [{ op: 'add', path: '/cards/0', value: card('a') }];
    const patched: AppInstanceEvent = { type: 'AppInstanceDataPatched', data: { format: 'json-patch', ops, by: 'u1', at } };
    spec.given([created()]).when({ type: 'PatchAppInstanceData', format: 'json-patch', ops, by: 'u1', at }).then([patched]);
    const state = spec.stateOf([created(), patched]);
    expect(state.data.cards).to.deep.equal([card('a')]);
    expect(state.version).to.equal(1);
    spec
      .given([created(), patched])
      .when({ type: 'PatchAppInstanceData', format: 'merge-patch', ops: [{ op: 'replace', path: '/cards/0/status', value: 'gone' }], by: 'u1', at })
      .thenThrows('DATA_SCHEMA_VIOLATION');
    spec.given([created()]).when({ type: 'PatchAppInstanceData', format: 'merge-patch', ops: [], by: 'u1', at }).then([]);
    spec.given([]).when({ type: 'PatchAppInstanceData', format: 'merge-patch', ops, by: 'u1', at }).thenThrows('APP_INSTANCE_NOT_FOUND', 'not_found');
  });

  it('keeps files by path (a new upload replaces), a bounded conversation, and deletes once', () => {
    const file = { path: 'docs/a.txt', key: 'app-instances/i1/f1', size: 3, contentType: 'text/plain', sha256: 'abc', uploadedBy: 'u1', at };
    const added: AppInstanceEvent = { type: 'AppInstanceFileAdded', data: file };
    spec.given([created()]).when({ type: 'AddAppInstanceFile', file }).then([added]);
    const replaced = { ...file, key: 'app-instances/i1/f2', size: 4 };
    const state = spec.stateOf([created(), added, { type: 'AppInstanceFileAdded', data: replaced }]);
    expect(state.files).to.deep.equal([replaced]);
    spec.given([created(), added]).when({ type: 'RemoveAppInstanceFile', path: 'docs/a.txt', by: 'u1', at }).then([{ type: 'AppInstanceFileRemoved', data: { path: 'docs/a.txt', by: 'u1', at } }]);
    spec.given([created()]).when({ type: 'RemoveAppInstanceFile', path: 'docs/a.txt', by: 'u1', at }).then([]);

    const msg = { type: 'AddAppInstanceMessage' as const, messageId: 'm1', role: 'user' as const, content: 'hello', by: 'u1', at };
    const msgEvent: AppInstanceEvent = { type: 'AppInstanceMessageAdded', data: { messageId: 'm1', role: 'user', content: 'hello', by: 'u1', at } };
    spec.given([created()]).when(msg).then([msgEvent]);
    spec.given([created(), msgEvent]).when(msg).then([]);
    const full = Array.from({ length: APP_INSTANCE_LIMITS.messages }, (_, i): AppInstanceEvent => ({ type: 'AppInstanceMessageAdded', data: { ...msgEvent.data, messageId: `m${i + 10}` } as never }));
    spec.given([created(), ...full]).when({ ...msg, messageId: 'new' }).thenThrows('CONVERSATION_FULL', 'conflict');

    const deleted: AppInstanceEvent = { type: 'AppInstanceDeleted', data: { by: 'u1', at } };
    spec.given([created()]).when({ type: 'DeleteAppInstance', by: 'u1', at }).then([deleted]);
    spec.given([created(), deleted]).when({ type: 'DeleteAppInstance', by: 'u1', at }).then([]);
    spec.given([created(), deleted]).when(msg).thenThrows('APP_INSTANCE_NOT_FOUND');
  });

  it('names the data paths each event changed (the If-Match rule of PATCH …/data)', () => {
    expect(changedDataPaths(created())).to.deep.equal(['']);
    expect(changedDataPaths({ type: 'AppInstanceDataPatched', data: { format: 'json-patch', ops: [{ op: 'remove', path: '/cards/2' }], by: null, at } })).to.deep.equal(['/cards/2']);
    expect(changedDataPaths({ type: 'AppInstanceMessageAdded', data: { messageId: 'm', role: 'user', content: 'x', by: null, at } })).to.deep.equal([]);
    expect(overlappingPaths(['/cards/1/title'], ['/cards/2/title', '/columns'])).to.deep.equal([]);
    expect(overlappingPaths(['/cards/1/title'], ['/cards/1'])).to.deep.equal([{ path: '/cards/1/title', changedPath: '/cards/1' }]);
    expect(overlappingPaths(['/cards'], [''])).to.have.length(1);
  });
});

describe('app instances: data patches (RFC 7396, RFC 6902) and the schema', () => {
  const data = { ...board(), cards: [card('a'), card('b', 'doing')] };

  it('applies a merge patch and a JSON patch without changing the input, and replays the diff exactly', () => {
    const before = JSON.stringify(data);
    const merged = applyDataPatch(data, { format: 'merge-patch', patch: { settings: { color: 'blue' } } }) as typeof data;
    expect((merged as any).settings).to.deep.equal({ color: 'blue' });
    const patched = applyDataPatch(data, { format: 'json-patch', ops: [{ op: 'replace', path: '/cards/1/assignee', value: 'ana' }, { op: 'remove', path: '/cards/0' }] }) as any;
    expect(patched.cards).to.deep.equal([card('b', 'doing', { assignee: 'ana' })]);
    expect(JSON.stringify(data)).to.equal(before);
    for (const after of [merged, patched]) {
      const ops = diffData(data, after);
      expect(applyDataOps(data, ops)).to.deep.equal(after);
    }
    // null set through a JSON Patch survives the diff (a merge patch could not say it)
    const withNull = applyDataPatch(data, { format: 'json-patch', ops: [{ op: 'add', path: '/settings', value: { x: null } }] }) as any;
    expect(applyDataOps(data, diffData(data, withNull))).to.deep.equal(withNull);
  });

  it('answers a malformed JSON patch 400 naming the operation, one that does not apply 409', () => {
    expect(codeOf(() => applyDataPatch(data, { format: 'json-patch', ops: [{ op: 'jump', path: '/x' }] }))).to.deep.include({ code: 'INVALID_PATCH', kind: 'invalid' });
    const missing = codeOf(() => applyDataPatch(data, { format: 'json-patch', ops: [{ op: 'add', path: '/settings', value: {} }, { op: 'replace', path: '/nothing/here', value: 1 }] }));
    expect(missing).to.deep.include({ code: 'PATCH_CONFLICT', kind: 'conflict' });
    expect(missing.details.index).to.equal(1);
    expect(codeOf(() => applyDataPatch(data, { format: 'json-patch', ops: [{ op: 'test', path: '/cards/0/id', value: 'zzz' }] })).code).to.equal('PATCH_TEST_FAILED');
    expect(codeOf(() => applyDataPatch(data, { format: 'merge-patch', patch: JSON.parse('{"__proto__": {"x": 1}}') })).code).to.equal('INVALID_PATCH');
    const reserved = codeOf(() => applyDataPatch(data, { format: 'merge-patch', patch: { settings: { constructor: 1, color: 'red' } } }));
    expect(reserved.details.fields[0].field).to.equal('body.settings.constructor');
  });

  it('checks data against the type\'s JSON Schema, naming the path', () => {
    expect(validateInstanceData('kanban', data)).to.equal(data);
    const wrong = codeOf(() => validateInstanceData('kanban', { ...data, cards: [{ ...card('a'), title: 5 }] }));
    expect(wrong.code).to.equal('DATA_SCHEMA_VIOLATION');
    expect(wrong.details.fields[0]).to.deep.include({ field: 'data.cards.0.title', pointer: '/cards/0/title' });
    const extra = codeOf(() => validateInstanceData('kanban', { ...data, cards: [{ ...card('a'), colour: 'red' }] }));
    expect(extra.details.fields[0].field).to.equal('data.cards.0.colour');
    const missing = codeOf(() => validateInstanceData('job_tracker', { applications: [{ id: 'j1', company: 'ACME', status: 'applied' }] }));
    expect(missing.details.fields[0].field).to.equal('data.applications.0.position');
    const status = codeOf(() => validateInstanceData('job_tracker', { applications: [{ id: 'j1', company: 'ACME', position: 'Dev', status: 'hired' }] }));
    expect(status.details.fields[0]).to.deep.include({ field: 'data.applications.0.status' });
    expect(validateInstanceData('job_tracker', { applications: [{ id: 'j1', company: 'ACME', position: 'Dev', status: 'applied', appliedAt: '2026-01-31', url: 'https://acme.test/jobs/1' }] })).to.be.an('object');
  });

  it('writes the offline playbook from a template: the same instance gives the same text', () => {
    const state = deciderSpec(appInstanceDecider).stateOf([created({ ...board(), cards: [card('a'), card('b', 'done')] })]);
    const text = templatePlaybook(state, [{ flowId: 'f1', name: 'Triage' }]);
    expect(text).to.equal(templatePlaybook(state, [{ flowId: 'f1', name: 'Triage' }]));
    expect(text).to.match(/^# Playbook: Board/);
    expect(text).to.include('column `todo` "To do": 1 card(s)');
    expect(text).to.include('`cards` (required): array of KanbanCard');
    expect(text).to.include('"Triage" `f1`');
    expect(text).to.include('application/json-patch+json');
  });
});
