import { DomainError } from '../shared/decider.js';
import { PROMPT_EXCERPT_CHARS, type CliLlmCallEvent, type CliLlmCallRecord, type CliLlmSettingsEvent, type ModelMap } from './events.js';
import type { CliLlmCallsState, CliLlmSettingsState } from './state.js';

export type CliLlmSettingsCommand = { type: 'SetCliLlmOrgSettings'; orgId: string; modelMap?: ModelMap; logPrompts?: boolean; setBy: string; at: string };

export type CliLlmCallCommand = { type: 'RecordCliLlmCall'; call: Omit<CliLlmCallRecord, 'content'> & { content: { prompt: string; answer: string } | null } };

const sameMap = (a: ModelMap, b: ModelMap) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** A settings change keeps what it does not name; setting what is already set records nothing. */
export function decideCliLlmSettings(command: CliLlmSettingsCommand, state: CliLlmSettingsState): CliLlmSettingsEvent[] {
  const modelMap = command.modelMap ?? state.modelMap;
  const logPrompts = command.logPrompts ?? state.logPrompts;
  for (const key of Object.keys(modelMap)) {
    if (key.indexOf('*') !== -1 && key.indexOf('*') !== key.length - 1) {
      throw new DomainError('INVALID_MODEL_PATTERN', `"${key}": a model pattern may have one "*", at its end`, 'invalid', { fields: [{ field: `body.modelMap.${key}`, message: 'a "*" may only end the name' }] });
    }
  }
  if (state.exists && sameMap(modelMap, state.modelMap) && logPrompts === state.logPrompts) return [];
  return [{ type: 'CliLlmOrgSettingsSet', data: { orgId: command.orgId, modelMap, logPrompts, setBy: command.setBy, at: command.at } }];
}

const cut = (text: string) => (text.length > PROMPT_EXCERPT_CHARS ? text.slice(0, PROMPT_EXCERPT_CHARS) : text);

/** Recording a call twice (a retried write) records it once; excerpts are cut so events stay small. */
export function decideCliLlmCall(command: CliLlmCallCommand, state: CliLlmCallsState): CliLlmCallEvent[] {
  const { call } = command;
  if (state.callIds.has(call.callId)) return [];
  const content = call.content ? { prompt: cut(call.content.prompt), answer: cut(call.content.answer) } : null;
  return [{ type: 'CliLlmCallRecorded', data: { ...call, content } }];
}
