import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';

/**
 * LLM spend of an organization, one stream per calendar month (`orgspend-<orgId>.<YYYY-MM>`):
 * every run records spend, so keeping it out of the `org-…` stream keeps that aggregate small,
 * and the month bounds how much a spend command has to load.
 */
export const spendEventSchemas = {
  LlmSpendRecorded: z.object({
    orgId: z.string(),
    amountUsd: z.number().finite().positive(),
    runId: z.string().nullable(),
    /** The caller's de-duplication key: a redelivered run event must not be charged twice. */
    spendId: z.string().nullable(),
    at: z.string(),
  }),
};

export type SpendEvent = { type: 'LlmSpendRecorded'; data: z.infer<typeof spendEventSchemas.LlmSpendRecorded> };
export type SpendCommand = { type: 'RecordLlmSpend'; orgId: string; amountUsd: number; runId: string | null; spendId: string | null; at: string };
export interface SpendState {
  spendIds: string[];
}

export const spendDecider: Decider<SpendCommand, SpendState, SpendEvent> = {
  initialState: { spendIds: [] },
  eventSchemas: spendEventSchemas,
  evolve(state, event) {
    return event.data.spendId ? { spendIds: [...state.spendIds, event.data.spendId] } : state;
  },
  decide(command, state) {
    if (!Number.isFinite(command.amountUsd) || command.amountUsd < 0) {
      throw new DomainError('INVALID_AMOUNT', 'amountUsd must be a finite, non-negative number', 'invalid', { field: 'amountUsd' });
    }
    if (command.amountUsd === 0) return [];
    if (command.spendId && state.spendIds.includes(command.spendId)) return [];
    const { orgId, amountUsd, runId, spendId, at } = command;
    return [{ type: 'LlmSpendRecorded', data: { orgId, amountUsd, runId, spendId, at } }];
  },
};

/** `YYYY-MM` of an ISO instant, in UTC. */
export const spendPeriodOf = (at: string) => at.slice(0, 7);
export const spendStreamId = (orgId: string, period: string) => `orgspend-${orgId}.${period}`;
/** First instant of the month (UTC) that `now` falls in. */
export function periodStartOf(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}
