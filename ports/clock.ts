/** Where the time comes from: the system clock in production, a clock a test moves by hand. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
