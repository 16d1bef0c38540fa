import { orgStreamId } from '../domain/orgs/index.js';
import { budgetLimitDecider, spendDecider, spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmProviderId } from '../ports/llm.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';

/**
 * What the execution engine calls when a run spent money on an LLM under an organization's
 * budget. Pass `spendId` (e.g. `<runId>:<nodeId>`) to make a redelivered call harmless; the spend
 * lands in the month of `at` (default: the context's time).
 */
export function recordLlmSpend(
  store: EventStore,
  context: CommandContext,
  input: { orgId: string; amountUsd: number; runId?: string | null; spendId?: string | null; at?: string },
) {
  const at = input.at ?? context.now.toISOString();
  return handleCommand(store, {
    streamId: spendStreamId(input.orgId, spendPeriodOf(at)),
    decider: spendDecider,
    command: { type: 'RecordLlmSpend', orgId: input.orgId, amountUsd: input.amountUsd, runId: input.runId ?? null, spendId: input.spendId ?? null, at },
    context: { ...context, orgId: input.orgId },
  });
}

/**
 * DomainError BUDGET_EXCEEDED (kind payment_required) when the organization has spent its monthly
 * limit (UTC calendar month): call it before any paid provider call. Decided by the spend decider
 * on the month's spend stream and the limit folded from the org stream, so a limit or a spend
 * recorded a moment ago counts at once. The offline provider costs nothing and stays usable, so an
 * organization over budget can still dry-run its flows. Appends nothing.
 */
export async function assertWithinBudget(ports: { eventStore: EventStore; clock: Clock }, caller: LlmCaller, provider: LlmProviderId): Promise<void> {
  if (!caller.orgId || provider === 'offline') return;
  const { state: limit } = await loadState(ports.eventStore, orgStreamId(caller.orgId), budgetLimitDecider);
  if (limit.limitUsd === null) return;
  const period = spendPeriodOf(ports.clock.now().toISOString());
  const { state: spend } = await loadState(ports.eventStore, spendStreamId(caller.orgId, period), spendDecider);
  spendDecider.decide({ type: 'CheckLlmBudget', limitUsd: limit.limitUsd, period }, spend);
}
