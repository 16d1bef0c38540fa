import type { RunNode } from '../definition.js';
import { RunInputError } from '../errors.js';
import { MAX_RUN_DELAY_MS } from '../limits.js';
import type { NodeKind } from './types.js';

/** `data.delayMs` as a whole number of milliseconds in [0, MAX_RUN_DELAY_MS]; anything else is 0. */
export function delayMs(node: RunNode): number {
  const ms = Number(node.data.delayMs);
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(Math.round(ms), MAX_RUN_DELAY_MS);
}

/** Waits (through the context's sleep, so a stop aborts it), then passes its input on. */
export const delayKind: NodeKind = {
  type: 'delay',
  async execute(node, context) {
    const ms = delayMs(node);
    if (!context.sleep) throw new RunInputError('CAPABILITY_MISSING', 'a delay node needs the sleep capability');
    if (ms > 0) await context.sleep(ms, context.signal);
    return { output: context.input, metadata: { delayMs: ms } };
  },
};
