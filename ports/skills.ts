import type { SkillContent, SkillScope } from '../domain/skills/index.js';

/**
 * The skills read model as the run worker, agents and the assistant see it (implemented by
 * projections/skills.ts, wired in app/container.ts): the skills active for a flow or a scope,
 * with their content for `load_skill`.
 */
export interface SkillsReadModel {
  /**
   * The skills active for this flow (the flow's workspace's skills, per-flow overrides applied);
   * none for an unknown flow. With `scope` (a run's owner, organization and workspace, recorded
   * with the run like its definition), the flow's own document is not read.
   */
  activeForFlow(flowId: string, scope?: SkillScope): Promise<SkillContent[]>;
  /** The enabled skills of a scope; with `only`, just those ids (enabled or not: an agent names its own). */
  activeInScope(scope: SkillScope, only?: readonly string[]): Promise<SkillContent[]>;
}
