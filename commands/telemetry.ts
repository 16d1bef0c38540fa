import { telemetrySettingsDecider, telemetrySettingsStreamId, type TelemetrySettingsState } from '../domain/telemetry/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';

/** The organization's tracing settings folded from its stream (defaults when it never set any). */
export async function telemetryOrgSettings(eventStore: EventStore, orgId: string): Promise<TelemetrySettingsState> {
  return (await loadState(eventStore, telemetrySettingsStreamId(orgId), telemetrySettingsDecider)).state;
}

export function setTelemetryOrgSettings(eventStore: EventStore, context: CommandContext, orgId: string, setBy: string, input: { recordContent?: boolean }) {
  return handleCommand(eventStore, {
    streamId: telemetrySettingsStreamId(orgId),
    decider: telemetrySettingsDecider,
    command: { type: 'SetTelemetrySettings', orgId, ...input, setBy, at: context.now.toISOString() },
    context: { ...context, orgId },
  });
}

/**
 * Whether an organization's prompts and completions may go on spans, remembered for `ttlMs` so an
 * LLM call does not read a stream; a change is seen within that time.
 */
export function contentRecording(eventStore: EventStore, ttlMs: number, now: () => number = Date.now) {
  const known = new Map<string, { recordContent: boolean; until: number }>();
  return async (caller: { orgId: string | null }): Promise<boolean> => {
    if (!caller.orgId) return false;
    const hit = known.get(caller.orgId);
    if (hit && hit.until > now()) return hit.recordContent;
    const { recordContent } = await telemetryOrgSettings(eventStore, caller.orgId);
    if (known.size >= 10_000) known.clear();
    known.set(caller.orgId, { recordContent, until: now() + ttlMs });
    return recordContent;
  };
}
