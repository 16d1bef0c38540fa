import { z } from 'zod';
import { decider, type Decider } from '../shared/decider.js';
import type { EventsOf } from '../shared/events.js';

/**
 * An organization's tracing settings (`telemetryorg-<orgId>`): whether the prompts and completions
 * of its LLM calls may be recorded on trace spans (`gen_ai.input.messages`, `gen_ai.output.messages`).
 * Off until the organization turns it on: traces leave the service for whatever collector the
 * operator runs, and what people type into a model is the organization's to give away.
 */
export const telemetrySettingsStreamId = (orgId: string) => `telemetryorg-${orgId}`;

const isoTime = z.string().datetime({ offset: true });

export const telemetrySettingsEventSchemas = {
  TelemetrySettingsSet: z.object({ orgId: z.string().min(1), recordContent: z.boolean(), setBy: z.string().min(1), at: isoTime }),
};

export type TelemetrySettingsEvent = EventsOf<typeof telemetrySettingsEventSchemas>;

export type TelemetrySettingsCommand = { type: 'SetTelemetrySettings'; orgId: string; recordContent?: boolean; setBy: string; at: string };

export interface TelemetrySettingsState {
  exists: boolean;
  recordContent: boolean;
}

export const initialTelemetrySettingsState: TelemetrySettingsState = { exists: false, recordContent: false };

export function evolveTelemetrySettings(_state: TelemetrySettingsState, event: TelemetrySettingsEvent): TelemetrySettingsState {
  switch (event.type) {
    case 'TelemetrySettingsSet':
      return { exists: true, recordContent: event.data.recordContent };
  }
}

/** Setting what is already set records nothing. */
export function decideTelemetrySettings(command: TelemetrySettingsCommand, state: TelemetrySettingsState): TelemetrySettingsEvent[] {
  const recordContent = command.recordContent ?? state.recordContent;
  if (state.exists && recordContent === state.recordContent) return [];
  return [{ type: 'TelemetrySettingsSet', data: { orgId: command.orgId, recordContent, setBy: command.setBy, at: command.at } }];
}

export const telemetrySettingsDecider: Decider<TelemetrySettingsCommand, TelemetrySettingsState, TelemetrySettingsEvent> = decider(
  initialTelemetrySettingsState,
  evolveTelemetrySettings,
  decideTelemetrySettings,
  telemetrySettingsEventSchemas,
);
