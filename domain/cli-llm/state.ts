import type { CliLlmCallEvent, CliLlmSettingsEvent, ModelMap } from './events.js';

export interface CliLlmSettingsState {
  exists: boolean;
  modelMap: ModelMap;
  logPrompts: boolean;
}

export const initialCliLlmSettingsState: CliLlmSettingsState = { exists: false, modelMap: {}, logPrompts: false };

export function evolveCliLlmSettings(state: CliLlmSettingsState, event: CliLlmSettingsEvent): CliLlmSettingsState {
  switch (event.type) {
    case 'CliLlmOrgSettingsSet':
      return { exists: true, modelMap: event.data.modelMap, logPrompts: event.data.logPrompts };
  }
}

/** A day of one user's calls: the ids recorded, so a retried record is not counted twice. */
export interface CliLlmCallsState {
  callIds: ReadonlySet<string>;
}

export const initialCliLlmCallsState: CliLlmCallsState = { callIds: new Set() };

export function evolveCliLlmCalls(state: CliLlmCallsState, event: CliLlmCallEvent): CliLlmCallsState {
  switch (event.type) {
    case 'CliLlmCallRecorded':
      return { callIds: new Set([...state.callIds, event.data.callId]) };
  }
}
