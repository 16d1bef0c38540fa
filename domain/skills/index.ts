import { decider, type Decider } from '../shared/decider.js';
import { decideSkill, decideSkillOwner, type SkillCommand, type SkillOwnerCommand } from './decide.js';
import { skillEventSchemas, skillOwnerEventSchemas, type SkillEvent, type SkillOwnerEvent } from './events.js';
import { evolveSkill, evolveSkillOwner, initialSkillOwnerState, initialSkillState, type SkillOwnerState, type SkillState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './inject.js';

/** A skill (`skill-<id>`): a named block of instructions injected into system prompts, with its per-flow overrides. */
export const skillDecider: Decider<SkillCommand, SkillState, SkillEvent> = decider(initialSkillState, evolveSkill, decideSkill, skillEventSchemas);

/** An owner's skill slots (`skillowner-<key>`): the per-owner limit. */
export const skillOwnerDecider: Decider<SkillOwnerCommand, SkillOwnerState, SkillOwnerEvent> = decider(initialSkillOwnerState, evolveSkillOwner, decideSkillOwner, skillOwnerEventSchemas);
