/**
 * Argument checks of the read-store port that both adapters share (the rules on what a filter or
 * an update may contain are the documents context's: domain/documents/store-rules.ts).
 */

/** MongoDB reads a negative limit as "one batch of |n|" and rejects a negative skip; refuse both
 * so the embedded store cannot quietly differ. 0 or undefined limit means no limit. */
export function assertFindWindow(options: { skip?: number; limit?: number }): void {
  for (const key of ['skip', 'limit'] as const) {
    const v = options[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new RangeError(`${key} must be a non-negative integer`);
  }
}

/** Checkpoints are event-log positions; anything else is a caller bug worth failing loudly on. */
export function assertPosition(position: number): void {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError('checkpoint position must be a non-negative safe integer');
}

