import { expect } from 'chai';
import { handleKeyedBatch, type KeyedMessage } from '../../infra/bus/keyed-batch.js';

const batch = (keys: string): KeyedMessage[] => [...keys].map((key, i) => ({ key, offset: String(100 + i) }));
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('keyed batch (the Kafka consumer handling one partition batch)', () => {
  it('keeps each key in order and resolves offsets in partition order only', async () => {
    const messages = batch('aabab');
    const handled: string[] = [];
    const resolved: string[] = [];
    // The first `a` is slow: the `b`s finish first, yet no offset passes the unfinished `a`.
    const ok = await handleKeyedBatch({
      messages,
      concurrency: 4,
      handle: async (m) => {
        await tick(m.offset === '100' ? 30 : 1);
        handled.push(m.offset);
        return true;
      },
      resolve: (offset) => resolved.push(offset),
    });
    expect(ok).to.equal(true);
    expect(handled.indexOf('102')).to.be.lessThan(handled.indexOf('100'));
    const aOrder = handled.filter((o) => ['100', '101', '103'].includes(o));
    expect(aOrder).to.deep.equal(['100', '101', '103']);
    expect(handled.filter((o) => ['102', '104'].includes(o))).to.deep.equal(['102', '104']);
    expect(resolved).to.deep.equal(['100', '101', '102', '103', '104']);
  });

  it('overlaps up to `concurrency` keys and never more', async () => {
    let inFlight = 0;
    let most = 0;
    await handleKeyedBatch({
      messages: batch('abcdefgh'),
      concurrency: 3,
      handle: async () => {
        most = Math.max(most, ++inFlight);
        await tick(5);
        inFlight--;
        return true;
      },
      resolve: () => undefined,
    });
    expect(most).to.equal(3);
  });

  it('with concurrency 1 handles in offset order, one at a time', async () => {
    const handled: string[] = [];
    await handleKeyedBatch({ messages: batch('abab'), concurrency: 1, handle: async (m) => (handled.push(m.offset), true), resolve: () => undefined });
    expect(handled).to.deep.equal(['100', '101', '102', '103']);
  });

  it('a handler that stops the batch leaves its offset and every later one unresolved', async () => {
    const resolved: string[] = [];
    const ok = await handleKeyedBatch({
      messages: batch('abc'),
      concurrency: 1,
      handle: async (m) => m.offset !== '101',
      resolve: (offset) => resolved.push(offset),
    });
    expect(ok).to.equal(false);
    expect(resolved).to.deep.equal(['100']);
  });

  it('waits for the other keys in flight before reporting a handler failure', async () => {
    let slowFinished = false;
    const resolved: string[] = [];
    const outcome = handleKeyedBatch({
      messages: batch('ab'),
      concurrency: 2,
      handle: async (m) => {
        if (m.key === 'a') throw new Error('boom');
        await tick(20);
        slowFinished = true;
        return true;
      },
      resolve: (offset) => resolved.push(offset),
    });
    let error: Error | null = null;
    await outcome.catch((err: Error) => (error = err));
    expect(error).to.have.property('message', 'boom');
    expect(slowFinished).to.equal(true);
    expect(resolved).to.deep.equal([]);
  });
});
