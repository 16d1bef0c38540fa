import { DomainError } from '../shared/decider.js';
import { SKILL_LIMITS, type SkillEvent, type SkillOwnerEvent, type SkillScope } from './events.js';
import { skillVisibleTo, type SkillOwnerState, type SkillState } from './state.js';

/** Commands of a skill (`skill-<id>`); every command but CreateSkill names the caller's scope. */
export type SkillCommand =
  | { type: 'CreateSkill'; skillId: string; name: string; description: string; content: string; enabled: boolean; ownerId: string; orgId: string | null; workspaceId: string | null; at: string }
  /** `enabled` (optional, as POST /skills takes it): the switch changes in the same decision; absent leaves it as it is. */
  | { type: 'UpdateSkill'; scope: SkillScope; name: string; description: string; content: string; enabled?: boolean; at: string }
  | { type: 'SetSkillEnabled'; scope: SkillScope; enabled: boolean; at: string }
  /** `enabled: null` removes the flow's override (the global switch applies again). */
  | { type: 'SetSkillForFlow'; scope: SkillScope; flowId: string; enabled: boolean | null; at: string }
  | { type: 'DeleteSkill'; scope: SkillScope; at: string };

export type SkillOwnerCommand = { type: 'TakeSkillSlot'; skillId: string; at: string } | { type: 'ReleaseSkillSlot'; skillId: string; at: string };

export const skillNotFound = () => new DomainError('SKILL_NOT_FOUND', 'skill not found', 'not_found');

function checkContent(content: string) {
  if (content.length > SKILL_LIMITS.contentChars) {
    throw new DomainError('SKILL_CONTENT_TOO_LONG', `a skill's content holds at most ${SKILL_LIMITS.contentChars} characters (this one has ${content.length})`, 'invalid', {
      field: 'body.content',
      limit: SKILL_LIMITS.contentChars,
      actual: content.length,
    });
  }
}

/** Missing, deleted and another tenant's skills are the same 404. */
function requireSkill(state: SkillState, scope: SkillScope) {
  if (!state.exists || state.deleted || !skillVisibleTo(state, scope)) throw skillNotFound();
}

export function decideSkill(command: SkillCommand, state: SkillState): SkillEvent[] {
  const at = command.at;
  if (command.type === 'CreateSkill') {
    if (state.exists) throw new DomainError('SKILL_EXISTS', 'skill id already used', 'conflict');
    checkContent(command.content);
    const { type: _type, ...data } = command;
    return [{ type: 'SkillCreated', data }];
  }
  requireSkill(state, command.scope);
  switch (command.type) {
    case 'UpdateSkill': {
      checkContent(command.content);
      const events: SkillEvent[] = [];
      if (command.name !== state.name || command.description !== state.description || command.content !== state.content) {
        events.push({ type: 'SkillUpdated', data: { name: command.name, description: command.description, content: command.content, at } });
      }
      if (command.enabled !== undefined && command.enabled !== state.enabled) events.push({ type: 'SkillEnabledChanged', data: { enabled: command.enabled, at } });
      return events;
    }
    case 'SetSkillEnabled':
      return command.enabled === state.enabled ? [] : [{ type: 'SkillEnabledChanged', data: { enabled: command.enabled, at } }];
    case 'SetSkillForFlow': {
      const current = state.flowOverrides[command.flowId];
      if (command.enabled === null ? current === undefined : current === command.enabled) return [];
      if (current === undefined && Object.keys(state.flowOverrides).length >= SKILL_LIMITS.flowOverrides) {
        throw new DomainError('TOO_MANY_FLOW_OVERRIDES', `a skill holds at most ${SKILL_LIMITS.flowOverrides} per-flow overrides`, 'conflict', { limit: SKILL_LIMITS.flowOverrides });
      }
      return [{ type: 'SkillFlowOverrideSet', data: { flowId: command.flowId, enabled: command.enabled, at } }];
    }
    case 'DeleteSkill':
      return [{ type: 'SkillDeleted', data: { at } }];
  }
}

export function decideSkillOwner(command: SkillOwnerCommand, state: SkillOwnerState): SkillOwnerEvent[] {
  const held = state.skillIds.includes(command.skillId);
  if (command.type === 'ReleaseSkillSlot') return held ? [{ type: 'SkillSlotReleased', data: { skillId: command.skillId, at: command.at } }] : [];
  if (held) return [];
  if (state.skillIds.length >= SKILL_LIMITS.perOwner) {
    throw new DomainError('TOO_MANY_SKILLS', `an owner holds at most ${SKILL_LIMITS.perOwner} skills; delete one first`, 'conflict', { limit: SKILL_LIMITS.perOwner });
  }
  return [{ type: 'SkillSlotTaken', data: { skillId: command.skillId, at: command.at } }];
}
