import { expect } from 'chai';
import { addSeq, hasSeq, noSeqs, terminalDecider, terminalStatus, type TerminalEvent } from '../../domain/terminals/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const t0 = '2026-01-01T00:00:00.000Z';
const t1 = '2026-01-01T00:00:30.000Z';
const t2 = '2026-01-01T00:01:10.000Z';
const user = 'u1';
const registered: TerminalEvent = {
  type: 'TerminalRegistered',
  data: { terminalId: 't1', userId: user, name: 'laptop', host: 'h', cwd: null, capabilities: [], leaseSeconds: 30, at: t0 },
};
const sent = (promptId: string, at = t0): TerminalEvent => ({ type: 'PromptSent', data: { promptId, content: `do ${promptId}`, sentBy: user, at } });
const delivered = (promptId: string, delivery: number, at: string, leaseExpiresAt: string): TerminalEvent => ({ type: 'PromptDelivered', data: { promptId, delivery, leaseExpiresAt, at } });
const step = (promptId: string, seq: number): TerminalEvent => ({ type: 'PromptStepRecorded', data: { promptId, seq, kind: 'output', content: `s${seq}`, at: t1 } });

describe('terminals: decider', () => {
  const spec = deciderSpec(terminalDecider);

  it('registers once; every other command refuses another user with TERMINAL_NOT_FOUND', () => {
    const { type: _t, ...data } = { type: 'RegisterTerminal' as const, ...registered.data };
    spec.given([]).when({ type: 'RegisterTerminal', ...data }).then([registered]);
    spec.given([registered]).when({ type: 'RegisterTerminal', ...data }).thenThrows('TERMINAL_EXISTS', 'conflict');
    spec.given([registered]).when({ type: 'SendPrompt', userId: 'u2', promptId: 'p1', content: 'x', at: t0 }).thenThrows('TERMINAL_NOT_FOUND', 'not_found');
    spec.given([]).when({ type: 'Heartbeat', userId: user, at: t0 }).thenThrows('TERMINAL_NOT_FOUND', 'not_found');
  });

  it('a heartbeat reconnects a disconnected terminal and is otherwise no event here', () => {
    spec.given([registered]).when({ type: 'Heartbeat', userId: user, at: t1 }).then([]);
    const gone: TerminalEvent = { type: 'TerminalDisconnected', data: { at: t1 } };
    spec.given([registered, gone]).when({ type: 'Heartbeat', userId: user, at: t2 }).then([{ type: 'TerminalReconnected', data: { at: t2 } }]);
    spec.given([registered, gone]).when({ type: 'Disconnect', userId: user, at: t2 }).then([]);
  });

  it('delivers the oldest queued prompt with a lease, and again only after the lease ran out unacknowledged', () => {
    const lease1 = '2026-01-01T00:01:00.000Z';
    spec.given([registered, sent('p1'), sent('p2')]).when({ type: 'DeliverNextPrompt', userId: user, leaseSeconds: 60, at: t0 }).then([delivered('p1', 1, t0, lease1)]);
    // p1 within its lease: p2 is next.
    spec.given([registered, sent('p1'), sent('p2'), delivered('p1', 1, t0, lease1)]).when({ type: 'DeliverNextPrompt', userId: user, leaseSeconds: 60, at: t1 }).then([delivered('p2', 1, t1, '2026-01-01T00:01:30.000Z')]);
    // p1's lease ran out: handed out again, delivery 2.
    spec.given([registered, sent('p1'), delivered('p1', 1, t0, lease1)]).when({ type: 'DeliverNextPrompt', userId: user, leaseSeconds: 60, at: t2 }).then([delivered('p1', 2, t2, '2026-01-01T00:02:10.000Z')]);
    // Acknowledged by a step: never again.
    spec.given([registered, sent('p1'), delivered('p1', 1, t0, lease1), step('p1', 0)]).when({ type: 'DeliverNextPrompt', userId: user, leaseSeconds: 60, at: t2 }).then([]);
    // Cancelled while queued: never delivered.
    spec.given([registered, sent('p1'), { type: 'PromptCancelled', data: { promptId: 'p1', by: user, at: t0 } }]).when({ type: 'DeliverNextPrompt', userId: user, leaseSeconds: 60, at: t2 }).then([]);
  });

  it('records steps idempotently by seq, refuses undelivered prompts and new steps after the answer', () => {
    const base = [registered, sent('p1'), delivered('p1', 1, t0, t1)];
    spec.given([registered, sent('p1')]).when({ type: 'RecordSteps', userId: user, promptId: 'p1', steps: [{ seq: 0, kind: 'output', content: 's0' }], at: t1 }).thenThrows('PROMPT_NOT_DELIVERED', 'conflict');
    spec
      .given([...base, step('p1', 0)])
      .when({ type: 'RecordSteps', userId: user, promptId: 'p1', steps: [{ seq: 0, kind: 'output', content: 's0' }, { seq: 1, kind: 'output', content: 's1' }, { seq: 1, kind: 'output', content: 's1' }], at: t1 })
      .then([step('p1', 1)]);
    const answered: TerminalEvent = { type: 'PromptAnswered', data: { promptId: 'p1', content: 'done', status: 'completed', at: t1 } };
    spec.given([...base, step('p1', 0), answered]).when({ type: 'RecordSteps', userId: user, promptId: 'p1', steps: [{ seq: 0, kind: 'output', content: 's0' }], at: t2 }).then([]);
    spec.given([...base, step('p1', 0), answered]).when({ type: 'RecordSteps', userId: user, promptId: 'p1', steps: [{ seq: 5, kind: 'output', content: 'late' }], at: t2 }).thenThrows('PROMPT_ALREADY_ANSWERED', 'conflict');
    spec.given(base).when({ type: 'RecordSteps', userId: user, promptId: 'nope', steps: [{ seq: 0, kind: 'output', content: 'x' }], at: t1 }).thenThrows('PROMPT_NOT_FOUND', 'not_found');
  });

  it('answers once: the same answer again is nothing, another is refused; a cancelled prompt keeps its answer', () => {
    const base = [registered, sent('p1'), delivered('p1', 1, t0, t1)];
    const answered: TerminalEvent = { type: 'PromptAnswered', data: { promptId: 'p1', content: 'done', status: 'completed', at: t1 } };
    spec.given(base).when({ type: 'AnswerPrompt', userId: user, promptId: 'p1', content: 'done', status: 'completed', at: t1 }).then([answered]);
    spec.given([...base, answered]).when({ type: 'AnswerPrompt', userId: user, promptId: 'p1', content: 'done', status: 'completed', at: t2 }).then([]);
    spec.given([...base, answered]).when({ type: 'AnswerPrompt', userId: user, promptId: 'p1', content: 'other', status: 'failed', at: t2 }).thenThrows('PROMPT_ALREADY_ANSWERED', 'conflict');
    const cancelled: TerminalEvent = { type: 'PromptCancelled', data: { promptId: 'p1', by: user, at: t1 } };
    const late: TerminalEvent = { type: 'PromptAnswered', data: { promptId: 'p1', content: 'partial', status: 'cancelled', at: t2 } };
    spec.given([...base, cancelled]).when({ type: 'AnswerPrompt', userId: user, promptId: 'p1', content: 'partial', status: 'cancelled', at: t2 }).then([late]);
    expect(spec.stateOf([...base, cancelled, late]).open).to.deep.equal([]);
    spec.given([...base, answered]).when({ type: 'CancelPrompt', userId: user, promptId: 'p1', at: t2 }).thenThrows('PROMPT_ALREADY_ANSWERED', 'conflict');
    spec.given([...base, cancelled]).when({ type: 'CancelPrompt', userId: user, promptId: 'p1', at: t2 }).then([]);
  });

  it('mirrors entries idempotently by seq and bounds open prompts', () => {
    const m0: TerminalEvent = { type: 'ThreadEntryMirrored', data: { seq: 0, role: 'user', content: 'ls', at: t0 } };
    spec.given([registered, m0]).when({ type: 'MirrorEntries', userId: user, entries: [{ seq: 0, role: 'user', content: 'ls' }, { seq: 2, role: 'assistant', content: 'x' }], at: t1 })
      .then([{ type: 'ThreadEntryMirrored', data: { seq: 2, role: 'assistant', content: 'x', at: t1 } }]);
    const many = Array.from({ length: 100 }, (_, i) => sent(`p${i}`));
    spec.given([registered, ...many]).when({ type: 'SendPrompt', userId: user, promptId: 'p100', content: 'x', at: t1 }).thenThrows('TOO_MANY_OPEN_PROMPTS', 'conflict');
  });

  it('keeps seen seqs compact: in-order seqs leave nothing above the watermark', () => {
    let seen = noSeqs;
    for (const s of [0, 1, 3, 2, 5]) seen = addSeq(seen, s);
    expect(seen).to.deep.equal({ upTo: 3, above: [5] });
    expect([0, 3, 4, 5].map((s) => hasSeq(seen, s))).to.deep.equal([true, true, false, true]);
  });

  it('derives the status from the last heartbeat and the clock', () => {
    const now = new Date('2026-01-01T01:00:00.000Z');
    const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
    expect(terminalStatus({ connected: true, lastHeartbeatAt: ago(60) }, now, 30, 300)).to.equal('ONLINE');
    expect(terminalStatus({ connected: true, lastHeartbeatAt: ago(61) }, now, 30, 300)).to.equal('STALE');
    expect(terminalStatus({ connected: true, lastHeartbeatAt: ago(301) }, now, 30, 300)).to.equal('OFFLINE');
    expect(terminalStatus({ connected: false, lastHeartbeatAt: ago(1) }, now, 30, 300)).to.equal('OFFLINE');
  });
});
