import { expect } from 'chai';
import { z } from 'zod';
import { handleCommand, type CommandContext } from '../../commands/handle.js';
import { runDecider, runStreamId } from '../../domain/runs/index.js';
import { markChecked, wasChecked } from '../../domain/shared/events.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const context = (): CommandContext => ({
  actorId: 'u1', orgId: null, workspaceId: null, correlationId: 'c1', causationId: null, requestId: null, now: new Date('2026-04-01T00:00:00Z'),
});
const at = '2026-04-01T00:00:00.000Z';
const request = {
  type: 'RequestRun' as const, processId: 'p1', flowId: 'f1', flowVersion: 3, ownerId: 'u1', orgId: null, workspaceId: null, mode: 'flow' as const,
  nodes: [{ id: 'a', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: 'x' } }], edges: [],
  inputs: {}, async: false, requestedBy: 'u1', at,
};

// Each event is checked against its schema once (issue 18): where the decider builds it from
// command input (checkedEvent, a 400 for the caller), else by the handler right before the append.
describe('run events: one schema check each, and none skipped', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = new SqliteEventStore(':memory:');
  });
  afterEach(() => store.close());

  it('marks an event the decider checked with the schema it was checked against', () => {
    const [requested] = runDecider.decide(request, runDecider.initialState);
    expect(wasChecked(requested, runDecider.eventSchemas.RunRequested)).to.equal(true);
    // Another schema (another decider's event of the same name) or a rebuilt event is not covered.
    expect(wasChecked(requested, z.object({}))).to.equal(false);
    expect(wasChecked({ ...requested }, runDecider.eventSchemas.RunRequested)).to.equal(false);
  });

  it('still refuses at the append an event the decider did not check and that breaks its schema', async () => {
    const sloppy = { ...runDecider, decide: () => [{ type: 'RunStarted' as const, data: { workerId: '', at } }] };
    const err = await handleCommand(store, { streamId: runStreamId('p1'), decider: sloppy, command: request, context: context() }).catch((e) => e);
    expect(err.message).to.match(/RunStarted does not match its schema/);
    expect(await store.readStream(runStreamId('p1'))).to.have.length(0);
  });

  it('refuses an event marked as checked against a different schema than its decider declares', async () => {
    const bad = markChecked({ type: 'RunStarted' as const, data: { workerId: '', at } }, z.object({ workerId: z.string() }));
    const sloppy = { ...runDecider, decide: () => [bad] };
    const err = await handleCommand(store, { streamId: runStreamId('p1'), decider: sloppy, command: request, context: context() }).catch((e) => e);
    expect(err.message).to.match(/RunStarted does not match its schema/);
    expect(await store.readStream(runStreamId('p1'))).to.have.length(0);
  });

  it('appends what the decider checked, unchanged', async () => {
    const result = await handleCommand(store, { streamId: runStreamId('p1'), decider: runDecider, command: request, context: context() });
    expect(result.events.map((e) => e.type)).to.deep.equal(['RunRequested']);
    const [stored] = await store.readStream(runStreamId('p1'));
    expect(stored.data).to.deep.equal(result.events[0].data);
  });
});
