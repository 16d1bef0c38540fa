import { expect } from 'chai';
import type { TerminalBeatEvent, TerminalEvent } from '../../domain/terminals/index.js';
import { terminalsProjector } from '../../projections/terminals.js';
import { projectionSpec } from '../support/projection-spec.js';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-01T00:00:30.000Z';
const t2 = '2026-01-01T00:01:00.000Z';
const stream = 'terminal-t1';
const e = (event: TerminalEvent) => ({ streamId: stream, event });
const beat = (at: string) => ({ streamId: 'terminalbeat-t1', event: { type: 'TerminalHeartbeatRecorded', data: { terminalId: 't1', at } } as TerminalBeatEvent });

describe('terminals: projection', () => {
  const events = [
    // A beat projected before the registration (distributed order) is kept; an older one never moves it back.
    beat(t2),
    e({ type: 'TerminalRegistered', data: { terminalId: 't1', userId: 'u1', name: 'laptop', host: 'h', cwd: '/w', capabilities: ['shell'], leaseSeconds: 30, at: t0 } }),
    e({ type: 'PromptSent', data: { promptId: 'p1', content: 'hi', sentBy: 'u1', at: t0 } }),
    e({ type: 'PromptDelivered', data: { promptId: 'p1', delivery: 1, leaseExpiresAt: t2, at: t0 } }),
    e({ type: 'PromptStepRecorded', data: { promptId: 'p1', seq: 0, kind: 'output', content: 'o', at: t1 } }),
    e({ type: 'PromptAnswered', data: { promptId: 'p1', content: 'done', status: 'completed', at: t1 } }),
    e({ type: 'PromptSent', data: { promptId: 'p2', content: 'next', sentBy: 'u1', at: t1 } }),
    e({ type: 'PromptCancelled', data: { promptId: 'p2', by: 'u1', at: t1 } }),
    e({ type: 'PromptSent', data: { promptId: 'p3', content: 'later', sentBy: 'u1', at: t1 } }),
    e({ type: 'ThreadEntryMirrored', data: { seq: 0, role: 'user', content: 'ls', at: t1 } }),
    e({ type: 'TerminalThinkingSet', data: { thinking: true, label: 'busy', at: t1 } }),
    e({ type: 'TerminalDisconnected', data: { at: t2 } }),
    beat(t1),
  ];

  it('projects the terminal and its last beat (never moving back)', async () => {
    await projectionSpec([terminalsProjector]).given(events).thenDocuments('terminals', [
      { _id: 't1', userId: 'u1', name: 'laptop', cwd: '/w', capabilities: ['shell'], connected: false, disconnectedAt: t2, thinking: { thinking: true, label: 'busy', at: t1 }, version: 10 },
    ]);
    await projectionSpec([terminalsProjector]).given(events).thenDocuments('terminal_beats', [{ _id: 't1', lastHeartbeatAt: t2 }]);
  });

  it('projects prompts with their status', async () => {
    await projectionSpec([terminalsProjector]).given(events).thenDocuments('terminal_prompts', [
      { _id: 'p1', terminalId: 't1', userId: 'u1', index: 0, status: 'completed', deliveries: 1, stepCount: 1, answer: { content: 'done', status: 'completed', at: t1 }, acknowledgedAt: t1 },
      { _id: 'p2', index: 1, status: 'cancelled', deliveries: 0, cancelledAt: t1 },
      { _id: 'p3', index: 2, status: 'queued', deliveries: 0 },
    ]);
  });

  it('projects the thread in stream order, one entry per event', async () => {
    await projectionSpec([terminalsProjector]).given(events).then(async (store) => {
      const docs = await store.collection('terminal_thread').find({ terminalId: 't1' }, { sort: { seq: 1 } });
      expect(docs.map((d) => [d.seq, d.type])).to.deep.equal([[1, 'prompt'], [2, 'delivered'], [3, 'step'], [4, 'answer'], [5, 'prompt'], [6, 'cancelled'], [7, 'prompt'], [8, 'mirror']]);
      expect(docs[2]).to.include({ role: 'assistant', kind: 'output', clientSeq: 0, content: 'o', promptId: 'p1' });
    });
  });
});
