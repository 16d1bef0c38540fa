import type { SkillEvent, SkillOwnerEvent, SkillScope } from './events.js';

export interface SkillState {
  exists: boolean;
  deleted: boolean;
  skillId: string;
  name: string;
  description: string;
  content: string;
  enabled: boolean;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** flowId → enabled for that flow, whatever the global switch says. */
  flowOverrides: Record<string, boolean>;
  createdAt: string;
  updatedAt: string;
}

export const initialSkillState: SkillState = {
  exists: false, deleted: false, skillId: '', name: '', description: '', content: '', enabled: false, ownerId: '', orgId: null, workspaceId: null,
  flowOverrides: {}, createdAt: '', updatedAt: '',
};

export function evolveSkill(state: SkillState, event: SkillEvent): SkillState {
  switch (event.type) {
    case 'SkillCreated': {
      const d = event.data;
      return { ...state, exists: true, skillId: d.skillId, name: d.name, description: d.description, content: d.content, enabled: d.enabled, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, createdAt: d.at, updatedAt: d.at };
    }
    case 'SkillUpdated':
      return { ...state, name: event.data.name, description: event.data.description, content: event.data.content, updatedAt: event.data.at };
    case 'SkillEnabledChanged':
      return { ...state, enabled: event.data.enabled, updatedAt: event.data.at };
    case 'SkillFlowOverrideSet': {
      const flowOverrides = { ...state.flowOverrides };
      if (event.data.enabled === null) delete flowOverrides[event.data.flowId];
      else flowOverrides[event.data.flowId] = event.data.enabled;
      return { ...state, flowOverrides, updatedAt: event.data.at };
    }
    case 'SkillDeleted':
      return { ...state, deleted: true, updatedAt: event.data.at };
    default:
      return state;
  }
}

/** Same rule as flows: an organization's workspace is shared by its members, a personal one is its owner's. */
export function skillVisibleTo(skill: Pick<SkillState, 'ownerId' | 'orgId' | 'workspaceId'>, scope: SkillScope): boolean {
  if (skill.orgId !== scope.orgId || skill.workspaceId !== scope.workspaceId) return false;
  return skill.orgId !== null || skill.ownerId === scope.userId;
}

export type SkillActivation = 'enabled_globally' | 'enabled_for_flow' | 'disabled_globally' | 'disabled_for_flow';

/** Whether a skill is active for a flow and why: a per-flow override wins over the global switch. */
export function skillActivationFor(skill: { enabled: boolean; flowOverrides: Record<string, boolean> | Array<{ flowId: string; enabled: boolean }> }, flowId: string | null): { active: boolean; reason: SkillActivation } {
  const override = flowId === null ? undefined : Array.isArray(skill.flowOverrides) ? skill.flowOverrides.find((o) => o.flowId === flowId)?.enabled : skill.flowOverrides[flowId];
  if (override !== undefined) return { active: override, reason: override ? 'enabled_for_flow' : 'disabled_for_flow' };
  return { active: skill.enabled, reason: skill.enabled ? 'enabled_globally' : 'disabled_globally' };
}

export interface SkillOwnerState {
  skillIds: string[];
  /** When each slot was taken (a slot whose skill never got written is released after a grace period). */
  takenAt: Record<string, string>;
}

export const initialSkillOwnerState: SkillOwnerState = { skillIds: [], takenAt: {} };

export function evolveSkillOwner(state: SkillOwnerState, event: SkillOwnerEvent): SkillOwnerState {
  switch (event.type) {
    case 'SkillSlotTaken':
      return state.skillIds.includes(event.data.skillId) ? state : { skillIds: [...state.skillIds, event.data.skillId], takenAt: { ...state.takenAt, [event.data.skillId]: event.data.at } };
    case 'SkillSlotReleased': {
      const takenAt = { ...state.takenAt };
      delete takenAt[event.data.skillId];
      return { skillIds: state.skillIds.filter((id) => id !== event.data.skillId), takenAt };
    }
    default:
      return state;
  }
}
