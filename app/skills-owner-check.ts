import { loadState } from '../commands/handle.js';
import { skillOwnerDecider, skillOwnerStreamId, type SkillScope } from '../domain/skills/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { SkillsReadModel } from '../ports/skills.js';

/**
 * The skills port, asked first whether the scope holds any skill at all. Every llm node asks for
 * its run's skills and most scopes have none: the scope's slot stream (`skillowner-…`, folded
 * through the command handler's cache, so only new events are read) answers that from the log,
 * and the read model is read only when a slot is taken. A slot is taken before its skill is
 * created and released after it is deleted, so an empty slot list means no skill. Wired only with
 * a MongoDB read store (app/container.ts): the in-memory one answers faster than a log read.
 */
export function withOwnerCheck(eventStore: EventStore, inner: SkillsReadModel): SkillsReadModel {
  const hasSkills = async (scope: SkillScope) => (await loadState(eventStore, skillOwnerStreamId(scope), skillOwnerDecider)).state.skillIds.length > 0;
  return {
    async activeForFlow(flowId, scope) {
      if (scope && !(await hasSkills(scope))) return [];
      return inner.activeForFlow(flowId, scope);
    },
    async activeInScope(scope, only) {
      if (!(await hasSkills(scope))) return [];
      return inner.activeInScope(scope, only);
    },
  };
}
