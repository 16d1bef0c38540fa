import type { FlowCommandOf, TriggerSettingsPatch } from './commands.js';
import { keyHashSchema, triggerSettingsSchema, type FlowEvent, type TriggerSettingsInput } from './events.js';
import { requireFlow, requireNode, validationFailed } from './guards.js';
import { jsonEqual } from './json.js';
import { nodeTriggerOf, type FlowState, type TriggerSettings } from './state.js';
import { issuesToProblems } from './validate-node.js';

/** The settings after a partial update, validated as a whole; null when nothing changes. */
function nextSettings(current: TriggerSettings, patch: TriggerSettingsPatch): TriggerSettingsInput | null {
  const next = {
    enabled: patch.enabled ?? current.enabled,
    allowedMethods: patch.allowedMethods ?? current.allowedMethods,
    inputSchema: patch.inputSchema !== undefined ? patch.inputSchema : current.inputSchema,
  };
  const parsed = triggerSettingsSchema.safeParse(next);
  if (!parsed.success) throw validationFailed(issuesToProblems(parsed.error.issues, 'body'));
  const unchanged = next.enabled === current.enabled && jsonEqual(next.allowedMethods, current.allowedMethods) && jsonEqual(next.inputSchema, current.inputSchema);
  return unchanged ? null : (next as TriggerSettingsInput);
}

function checkKeyHash(keyHash: string): void {
  const parsed = keyHashSchema.safeParse(keyHash);
  if (!parsed.success) throw validationFailed(issuesToProblems(parsed.error.issues, 'keyHash'));
}

export function updateFlowTrigger(command: FlowCommandOf<'UpdateFlowTrigger'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const next = nextSettings(state.trigger, command);
  return next ? [{ type: 'FlowTriggerUpdated', data: { ...next, at: command.at } }] : [];
}

/** The new hash replaces the old at once: the previous key stops working with this event. */
export function regenerateFlowTriggerKey(command: FlowCommandOf<'RegenerateFlowTriggerKey'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  checkKeyHash(command.keyHash);
  return [{ type: 'FlowTriggerKeyRegenerated', data: { keyHash: command.keyHash, at: command.at } }];
}

export function updateNodeTrigger(command: FlowCommandOf<'UpdateNodeTrigger'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireNode(state, command.nodeId);
  const next = nextSettings(nodeTriggerOf(state, command.nodeId), command);
  return next ? [{ type: 'NodeTriggerUpdated', data: { nodeId: command.nodeId, ...next, at: command.at } }] : [];
}

export function regenerateNodeTriggerKey(command: FlowCommandOf<'RegenerateNodeTriggerKey'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireNode(state, command.nodeId);
  checkKeyHash(command.keyHash);
  return [{ type: 'NodeTriggerKeyRegenerated', data: { nodeId: command.nodeId, keyHash: command.keyHash, at: command.at } }];
}
