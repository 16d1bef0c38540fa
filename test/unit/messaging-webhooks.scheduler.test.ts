import { expect } from 'chai';
import { DeliveryScheduler } from '../../infra/messaging-webhooks/scheduler.js';
import { waitUntil } from '../support/wait.js';

/** How long the fake attempts take (the receiver's slowness, not a wait of the test). */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook delivery scheduler (timer wheel)', () => {
  it('fires at the armed time, keeps the earlier of two armings, and caps attempts in flight', async () => {
    const started: Array<{ id: string; at: number }> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const scheduler = new DeliveryScheduler(
      async (id) => {
        started.push({ id, at: Date.now() });
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await sleep(40);
        inFlight--;
      },
      2,
      () => undefined,
    );
    const t0 = Date.now();
    scheduler.schedule('late', t0 + 150);
    scheduler.schedule('late', t0 + 60); // earlier wins
    scheduler.schedule('late', t0 + 300); // later ignored
    for (const id of ['a', 'b', 'c', 'd']) scheduler.schedule(id, t0);
    expect(scheduler.holds('late')).to.equal(true);
    await waitUntil('every armed attempt to have run', () => started.length === 5 && scheduler.stats().inFlight + scheduler.stats().queued + scheduler.stats().armed === 0, 5_000, 5);
    expect(maxInFlight).to.equal(2);
    expect(started.map((s) => s.id).sort()).to.deep.equal(['a', 'b', 'c', 'd', 'late']);
    const late = started.find((s) => s.id === 'late')!;
    expect(late.at - t0).to.be.within(55, 140);
    await scheduler.close();
  });

  it('re-arms a delivery asked for while its attempt runs, after that attempt; close aborts and disarms', async () => {
    const runs: string[] = [];
    let signal: AbortSignal | null = null;
    const scheduler = new DeliveryScheduler(
      async (id, s) => {
        runs.push(id);
        signal = s;
        await sleep(50);
      },
      4,
      () => undefined,
    );
    scheduler.schedule('x', 0);
    await waitUntil("x's attempt in flight", () => scheduler.stats().inFlight === 1, 5_000, 5);
    scheduler.schedule('x', 0); // in flight: remembered, not run twice at once
    expect(runs).to.deep.equal(['x']);
    await waitUntil("x's second attempt to end", () => runs.length === 2 && scheduler.stats().inFlight === 0, 5_000, 5);
    expect(runs).to.deep.equal(['x', 'x']);
    scheduler.schedule('y', Date.now() + 10_000);
    expect(scheduler.stats().armed).to.equal(1);
    await scheduler.close();
    expect(scheduler.stats()).to.deep.equal({ armed: 0, queued: 0, inFlight: 0 });
    expect(signal!.aborted).to.equal(true);
    scheduler.schedule('z', 0);
    expect(scheduler.holds('z')).to.equal(false);
  });
});
