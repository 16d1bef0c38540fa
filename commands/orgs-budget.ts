import { spendDecider, spendPeriodOf, spendStreamId } from '../domain/orgs/spend.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

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
