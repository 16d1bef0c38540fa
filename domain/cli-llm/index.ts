import { decider, type Decider } from '../shared/decider.js';
import { decideCliLlmCall, decideCliLlmSettings, type CliLlmCallCommand, type CliLlmSettingsCommand } from './decide.js';
import { cliLlmCallEventSchemas, cliLlmSettingsEventSchemas, type CliLlmCallEvent, type CliLlmSettingsEvent } from './events.js';
import { evolveCliLlmCalls, evolveCliLlmSettings, initialCliLlmCallsState, initialCliLlmSettingsState, type CliLlmCallsState, type CliLlmSettingsState } from './state.js';

/**
 * The CLI's LLM proxy (POST /cli/llm/messages): an organization's routing and prompt-logging
 * settings (`clillmorg-<orgId>`), and each user's calls by UTC day (`clillm-<userId>.<YYYY-MM-DD>`).
 */
export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './routing.js';

export const cliLlmSettingsStreamId = (orgId: string) => `clillmorg-${orgId}`;
/** `at` is an ISO time; the day is its UTC date. */
export const cliLlmCallsStreamId = (userId: string, at: string) => `clillm-${userId}.${at.slice(0, 10)}`;

export const cliLlmSettingsDecider: Decider<CliLlmSettingsCommand, CliLlmSettingsState, CliLlmSettingsEvent> = decider(initialCliLlmSettingsState, evolveCliLlmSettings, decideCliLlmSettings, cliLlmSettingsEventSchemas);

export const cliLlmCallsDecider: Decider<CliLlmCallCommand, CliLlmCallsState, CliLlmCallEvent> = decider(initialCliLlmCallsState, evolveCliLlmCalls, decideCliLlmCall, cliLlmCallEventSchemas);
