import { loadSkillResult, loadSkillTool, withSkills, type SkillContent, type SkillScope } from '../domain/skills/index.js';
import type { SkillsReadModel } from '../ports/skills.js';
import type { AgentTool } from './agents-loop.js';

/**
 * Skills for a tool-calling loop (the assistant, agents): the active skills of a scope (or the ids an
 * agent names), the system prompt with their names and short descriptions added, and the
 * `load_skill` tool that answers a skill's full content (an unknown skill is an error result that
 * lists the ids the model may use). No skills: the system prompt unchanged and no tool.
 */
export interface LoopSkills {
  skills: SkillContent[];
  system(base: string | null): string | null;
  tools: AgentTool[];
}

export async function loopSkills(reads: SkillsReadModel, scope: SkillScope, only?: readonly string[]): Promise<LoopSkills> {
  const skills = await reads.activeInScope(scope, only);
  const tools: AgentTool[] =
    skills.length === 0
      ? []
      : [
          {
            name: loadSkillTool.name,
            description: loadSkillTool.description,
            inputSchema: JSON.parse(JSON.stringify(loadSkillTool.inputSchema)) as Record<string, unknown>,
            async run(input) {
              const answer = loadSkillResult(skills, input);
              if (answer.isError) throw new Error(answer.content);
              return answer.content;
            },
          },
        ];
  return { skills, system: (base) => withSkills(base, skills), tools };
}
