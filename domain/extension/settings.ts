import { z } from 'zod';
import { decider, DomainError, type Decider } from '../shared/decider.js';
import type { EventsOf } from '../shared/events.js';

/**
 * An organization's extension settings (`extsettings-<orgId>`): its default model and allowed list,
 * as `provider:model` strings (null: the service variables apply). Each change is one event with who.
 */
export const modelRefText = z.string().regex(/^[a-z_]+:[^\s:][^\s]{0,199}$/);

export const extensionSettingsEventSchemas = {
  ExtensionSettingsUpdated: z.object({
    orgId: z.string(),
    defaultModel: modelRefText.nullable(),
    allowedModels: z.array(modelRefText).max(100).nullable(),
    by: z.string(),
    at: z.string(),
  }),
};
export type ExtensionSettingsEvent = EventsOf<typeof extensionSettingsEventSchemas>;
export const EXTENSION_SETTINGS_CATEGORY = 'extsettings';
export const extensionSettingsStreamId = (orgId: string) => `${EXTENSION_SETTINGS_CATEGORY}-${orgId}`;

export interface ExtensionSettingsState {
  defaultModel: string | null;
  allowedModels: string[] | null;
  updatedAt: string | null;
  updatedBy: string | null;
}
export const initialExtensionSettingsState: ExtensionSettingsState = { defaultModel: null, allowedModels: null, updatedAt: null, updatedBy: null };

export function evolveExtensionSettings(state: ExtensionSettingsState, event: ExtensionSettingsEvent): ExtensionSettingsState {
  switch (event.type) {
    case 'ExtensionSettingsUpdated':
      return { defaultModel: event.data.defaultModel, allowedModels: event.data.allowedModels, updatedAt: event.data.at, updatedBy: event.data.by };
    default:
      return state;
  }
}

export type ExtensionSettingsCommand = { type: 'UpdateExtensionSettings'; orgId: string; defaultModel: string | null; allowedModels: string[] | null; by: string; at: string };

export function decideExtensionSettings(command: ExtensionSettingsCommand, state: ExtensionSettingsState): ExtensionSettingsEvent[] {
  const allowed = command.allowedModels ? [...new Set(command.allowedModels)] : null;
  if (allowed && command.defaultModel && !allowed.includes(command.defaultModel)) {
    throw new DomainError('DEFAULT_MODEL_NOT_ALLOWED', 'defaultModel must be one of allowedModels', 'invalid', { field: 'body.defaultModel' });
  }
  const same = state.defaultModel === command.defaultModel && JSON.stringify(state.allowedModels) === JSON.stringify(allowed);
  if (same && state.updatedAt !== null) return [];
  return [{ type: 'ExtensionSettingsUpdated', data: { orgId: command.orgId, defaultModel: command.defaultModel, allowedModels: allowed, by: command.by, at: command.at } }];
}

export const extensionSettingsDecider: Decider<ExtensionSettingsCommand, ExtensionSettingsState, ExtensionSettingsEvent> = decider(
  initialExtensionSettingsState,
  evolveExtensionSettings,
  decideExtensionSettings,
  extensionSettingsEventSchemas,
);
