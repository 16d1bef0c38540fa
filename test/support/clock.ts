import type { Clock } from '../../ports/clock.js';

/**
 * A clock a test moves by hand, so expiry is tested without sleeping: it starts at the real time
 * and only ever moves forward by `advance`.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    if (ms < 0) throw new Error('a test clock only moves forward');
    this.offsetMs += ms;
  }
}
