import { expect } from 'chai';
import {
  bm25Scores,
  cosine,
  indexTerms,
  matchesMetadataFilter,
  memoryDecider,
  rankMemories,
  stem,
  tokenize,
  type MemoryCommand,
  type MemoryEvent,
} from '../../domain/memory/index.js';
import { deciderSpec } from '../support/decider-spec.js';

describe('memory tokenizer', () => {
  it('lower-cases, folds accents, drops stop words and stems lightly', () => {
    expect(tokenize('The user is VEGETARIAN and loves hiking in the Café')).to.deep.equal(['user', 'vegetarian', 'lov', 'hik', 'caf']);
    for (const [a, b] of [['likes', 'liked'], ['allergies', 'allergy'], ['running', 'runs'], ['birthdays', 'birthday'], ['families', 'family'], ['boxes', 'box']]) {
      expect(stem(a), `${a} ~ ${b}`).to.equal(stem(b));
    }
    expect(stem('glass')).to.equal('glass');
    expect(stem('address')).to.equal('address');
  });
  it('keeps letters and digits of any script, splits on the rest', () => {
    expect(tokenize('東京 2024-05-01, naïve!')).to.deep.equal(['東京', '2024', '05', '01', 'naiv']);
  });
  it('adds prefix terms for long tokens', () => {
    expect(indexTerms(['travell', 'cat'])).to.deep.equal(['travell', 'cat', 'trave*']);
  });
});

describe('memory ranking', () => {
  const docs = [
    { id: 'a', tokens: ['coffe', 'black', 'morn'] },
    { id: 'b', tokens: ['tea', 'green', 'coffe', 'coffe'] },
    { id: 'c', tokens: ['ski', 'alp'] },
  ];
  it('BM25: rarer terms weigh more, repeated terms saturate, unmatched docs score 0', () => {
    const scores = bm25Scores(['coffe', 'black'], docs, { documentCount: 3 });
    expect(scores.get('a')!).to.be.greaterThan(scores.get('b')!);
    expect(scores.has('c'), 'an unmatched memory has no score').to.equal(false);
  });
  it('ranks best first, drops non-matching, and keeps input order on ties', () => {
    const ranked = rankMemories(['coffe'], null, [{ id: 'x', tokens: ['coffe'] }, { id: 'y', tokens: ['coffe'] }, { id: 'z', tokens: ['tea'] }], { documentCount: 3 }, 0.5);
    expect(ranked.map((r) => r.id)).to.deep.equal(['x', 'y']);
  });
  it('hybrid: similarity finds a memory without shared words; scores stay in [0, 1]', () => {
    const ranked = rankMemories(['sleep'], [1, 0], [{ id: 'lex', tokens: ['sleep'], vector: [0, 1] }, { id: 'sem', tokens: ['insomnia'], vector: [0.9, 0.1] }], { documentCount: 2 }, 0.5);
    expect(ranked.map((r) => r.id)).to.have.members(['lex', 'sem']);
    for (const r of ranked) expect(r.score).to.be.within(0, 1);
    expect(ranked.find((r) => r.id === 'sem')!.semantic).to.be.closeTo(cosine([1, 0], [0.9, 0.1]), 1e-12);
  });
});

describe('memory decider', () => {
  const spec = deciderSpec(memoryDecider);
  const tenant = { userId: 'u1', orgId: null, workspaceId: null };
  const author = { by: 'u1', source: 'api', at: '2026-01-01T00:00:00.000Z' };
  const save: MemoryCommand = { type: 'SaveMemory', memoryId: 'm1', text: 'hello', metadata: { a: 1 }, subject: { userId: 'alice', agentId: null, runId: null }, tenant, embedding: null, ...author };
  const saved = spec.given([]).when(save).events();

  it('saves once; a second save is MEMORY_EXISTS', () => {
    expect(spec.stateOf(saved)).to.deep.include({ exists: true, text: 'hello', ownerId: 'u1', version: 0 });
    spec.given(saved).when(save).thenThrows('MEMORY_EXISTS');
  });
  it('update records old and new; an unchanged update emits nothing', () => {
    const events = spec.given(saved).when({ type: 'UpdateMemory', memoryId: 'm1', tenant, text: 'bye', ...author }).events() as MemoryEvent[];
    expect(events[0].type).to.equal('MemoryUpdated');
    expect(events[0].data).to.deep.include({ previousText: 'hello', text: 'bye', previousMetadata: { a: 1 }, metadata: { a: 1 } });
    spec.given(saved).when({ type: 'UpdateMemory', memoryId: 'm1', tenant, text: 'hello', metadata: { a: 1 }, ...author }).then([]);
  });
  it("another tenant, a wrong scope, or a deleted memory is MEMORY_NOT_FOUND (not_found: 404)", () => {
    const other = { userId: 'u2', orgId: null, workspaceId: null };
    for (const command of [
      { type: 'UpdateMemory', memoryId: 'm1', tenant: other, text: 'x', ...author },
      { type: 'DeleteMemory', memoryId: 'm1', tenant: other, ...author },
      { type: 'DeleteMemory', memoryId: 'm1', tenant, scope: { userId: 'bob' }, ...author },
    ] as MemoryCommand[]) {
      spec.given(saved).when(command).thenThrows('MEMORY_NOT_FOUND', 'not_found');
    }
    const deletion = spec.given(saved).when({ type: 'DeleteMemory', memoryId: 'm1', tenant, scope: { userId: 'alice' }, ...author }).events();
    const deleted = [...saved, ...deletion];
    expect(spec.stateOf(deleted).deleted).to.equal(true);
    spec.given(deleted).when({ type: 'DeleteMemory', memoryId: 'm1', tenant, ...author }).thenThrows('MEMORY_NOT_FOUND');
  });
  it('evolve never mutates its input', () => {
    const state = spec.stateOf(saved);
    const frozen = JSON.stringify(state);
    memoryDecider.evolve(state, { type: 'MemoryDeleted', data: { memoryId: 'm1', previousText: 'hello', previousMetadata: {}, ...author } });
    expect(JSON.stringify(state)).to.equal(frozen);
  });
});

describe('memory metadata filters (in process, MongoDB meaning)', () => {
  const m = { topic: 'food', n: 3, ok: true, none: null };
  const cases: Array<[Record<string, unknown>, boolean]> = [
    [{ topic: 'food' }, true],
    [{ topic: 'travel' }, false],
    [{ missing: null }, true],
    [{ none: null }, true],
    [{ topic: { $in: ['food', 'x'] } }, true],
    [{ topic: { $nin: ['food'] } }, false],
    [{ missing: { $ne: 'x' } }, true],
    [{ n: { $gt: 2, $lte: 3 } }, true],
    [{ n: { $gt: '2' } }, false],
    [{ topic: { $gte: 'f' } }, true],
    [{ ok: true, n: 3 }, true],
    [{ ok: true, n: 4 }, false],
  ];
  for (const [filter, expected] of cases) {
    it(`${JSON.stringify(filter)} → ${expected}`, () => {
      expect(matchesMetadataFilter(m, filter as never)).to.equal(expected);
    });
  }
});
