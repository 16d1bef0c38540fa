import {
  skillDecider,
  skillOwnerDecider,
  skillOwnerStreamId,
  skillStreamId,
  type SkillOwnerState,
  type SkillScope,
  type SkillState,
} from '../domain/skills/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';

export interface CreateSkillInput {
  skillId: string;
  name: string;
  description: string;
  content: string;
  enabled: boolean;
}

/**
 * Takes one of the owner's slots (`skillowner-<key>`, 409 TOO_MANY_SKILLS past the limit), then
 * records the skill. Should the second write fail, the slot is given back; a crash between the two
 * leaves a slot held by a skill that does not exist, released by the next create that finds the
 * owner at the limit (once the slot is a minute old: releaseOrphanSlots).
 */
export async function createSkill(store: EventStore, context: CommandContext, scope: SkillScope, input: CreateSkillInput) {
  const ownerStream = skillOwnerStreamId(scope);
  const take = () => handleAtContextTime(store, context, ownerStream, skillOwnerDecider, { type: 'TakeSkillSlot', skillId: input.skillId });
  try {
    await take();
  } catch (err) {
    // At the limit: slots whose skill was never written (a crash between the two writes) are given back, then one more try.
    if (!(err instanceof DomainError && err.code === 'TOO_MANY_SKILLS') || !(await releaseOrphanSlots(store, context, scope))) throw err;
    await take();
  }
  try {
    return await handleAtContextTime(store, context, skillStreamId(input.skillId), skillDecider, {
      type: 'CreateSkill', ...input, ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId,
    });
  } catch (err) {
    await handleAtContextTime(store, context, ownerStream, skillOwnerDecider, { type: 'ReleaseSkillSlot', skillId: input.skillId }).catch(() => undefined);
    throw err;
  }
}

export function updateSkill(store: EventStore, context: CommandContext, scope: SkillScope, skillId: string, input: { name: string; description: string; content: string; enabled?: boolean }, expectedRevision?: number) {
  return handleAtContextTime(store, context, skillStreamId(skillId), skillDecider, { type: 'UpdateSkill', scope, ...input }, expectedRevision);
}

export function setSkillEnabled(store: EventStore, context: CommandContext, scope: SkillScope, skillId: string, enabled: boolean) {
  return handleAtContextTime(store, context, skillStreamId(skillId), skillDecider, { type: 'SetSkillEnabled', scope, enabled });
}

/** The flow's own visibility is the caller's to check (the route reads it); this records the override. */
export function setSkillForFlow(store: EventStore, context: CommandContext, scope: SkillScope, skillId: string, flowId: string, enabled: boolean | null) {
  return handleAtContextTime(store, context, skillStreamId(skillId), skillDecider, { type: 'SetSkillForFlow', scope, flowId, enabled });
}

/** Deletes the skill, then gives its slot back to the owner. */
export async function deleteSkill(store: EventStore, context: CommandContext, scope: SkillScope, skillId: string) {
  const result = await handleAtContextTime(store, context, skillStreamId(skillId), skillDecider, { type: 'DeleteSkill', scope });
  await handleAtContextTime(store, context, skillOwnerStreamId(scope), skillOwnerDecider, { type: 'ReleaseSkillSlot', skillId });
  return result;
}

/** A slot taken this long ago whose skill stream does not exist is an orphan. */
export const ORPHAN_SLOT_GRACE_MS = 60_000;

/** Releases the owner's orphaned slots (decided on the log: the slot stream and each skill's stream); true when any was released. */
export async function releaseOrphanSlots(store: EventStore, context: CommandContext, scope: SkillScope): Promise<boolean> {
  const ownerStream = skillOwnerStreamId(scope);
  const { state } = await loadState<SkillOwnerState>(store, ownerStream, skillOwnerDecider);
  let released = false;
  for (const skillId of state.skillIds) {
    if (context.now.getTime() - Date.parse(state.takenAt[skillId] ?? '') < ORPHAN_SLOT_GRACE_MS) continue;
    const { state: skill } = await loadSkill(store, skillId);
    if (skill.exists) continue;
    await handleAtContextTime(store, context, ownerStream, skillOwnerDecider, { type: 'ReleaseSkillSlot', skillId });
    released = true;
  }
  return released;
}

export function loadSkill(store: EventStore, skillId: string) {
  return loadState<SkillState>(store, skillStreamId(skillId), skillDecider);
}
