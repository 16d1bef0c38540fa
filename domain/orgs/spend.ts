import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';
import { orgEventSchemas, type OrgEvent } from './events.js';

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
/**
 * `CheckLlmBudget` appends nothing: it is refused with BUDGET_EXCEEDED when the month has spent the
 * organization's limit (`limitUsd`, folded from the org stream by `budgetLimitDecider`; null: no limit).
 */
export type SpendCommand =
  | { type: 'RecordLlmSpend'; orgId: string; amountUsd: number; runId: string | null; spendId: string | null; at: string }
  | { type: 'CheckLlmBudget'; limitUsd: number | null; period: string };
export interface SpendState {
  spendIds: string[];
  /** Counted in micro-dollars, as the spend read model does, so both show the same sum. */
  spentMicroUsd: number;
}

export const spendDecider: Decider<SpendCommand, SpendState, SpendEvent> = {
  initialState: { spendIds: [], spentMicroUsd: 0 },
  eventSchemas: spendEventSchemas,
  evolve(state, event) {
    const spentMicroUsd = state.spentMicroUsd + Math.round(event.data.amountUsd * 1_000_000);
    return { spendIds: event.data.spendId ? [...state.spendIds, event.data.spendId] : state.spendIds, spentMicroUsd };
  },
  decide(command, state) {
    if (command.type === 'CheckLlmBudget') return checkBudget(command, state);
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

function checkBudget({ limitUsd, period }: Extract<SpendCommand, { type: 'CheckLlmBudget' }>, state: SpendState): SpendEvent[] {
  if (limitUsd === null) return [];
  const spentUsd = state.spentMicroUsd / 1_000_000;
  if (spentUsd >= limitUsd) {
    throw new DomainError('BUDGET_EXCEEDED', `the organization has spent ${spentUsd} of its ${limitUsd} USD LLM budget for ${period}`, 'payment_required', { limitUsd, spentUsd, period });
  }
  return [];
}

export interface BudgetLimitState {
  /** US dollars per calendar month; null when none is set or the organization is gone. */
  limitUsd: number | null;
}

/**
 * The org stream as the budget sees it: only the limit. It decides nothing (the org decider owns
 * every org command); it exists so the budget check folds the limit from the log with the command
 * handler's cache instead of asking a read model.
 */
export const budgetLimitDecider: Decider<never, BudgetLimitState, OrgEvent> = {
  initialState: { limitUsd: null },
  eventSchemas: orgEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
      case 'OrganizationDeleted':
        return { limitUsd: null };
      case 'OrganizationUpdated':
        return event.data.budgetLimitUsd === undefined ? state : { limitUsd: event.data.budgetLimitUsd };
      default:
        return state;
    }
  },
  decide: () => [],
};
