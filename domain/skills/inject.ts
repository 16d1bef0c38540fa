/**
 * How skills reach a model (LLM nodes, agents, the assistant): only each active skill's name and
 * short description go into the system prompt, with the `load_skill` tool that returns a skill's
 * full content when the model asks for it, so many skills do not crowd the context.
 */

export interface SkillSummary {
  id: string;
  name: string;
  description: string;
}

export interface SkillContent extends SkillSummary {
  content: string;
}

export const LOAD_SKILL_TOOL = 'load_skill';

/** The tool as offered to the model (JSON Schema of its arguments). */
export const loadSkillTool = {
  name: LOAD_SKILL_TOOL,
  description: 'Load the full instructions of one of the skills listed in the system prompt. Pass the skill id (or its exact name).',
  inputSchema: {
    type: 'object',
    properties: { skill: { type: 'string', description: 'the skill id, or its exact name' } },
    required: ['skill'],
    additionalProperties: false,
  },
} as const;

/** The block appended to the system prompt; empty when no skill is active. */
export function skillsSystemPrompt(skills: readonly SkillSummary[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map((s) => `- ${s.name} (id: ${s.id}): ${s.description}`);
  return [`Skills you can use. Call the ${LOAD_SKILL_TOOL} tool with a skill's id to read its full instructions before you follow it:`, ...lines].join('\n');
}

/** The system message with the skills block added after the caller's own instructions. */
export function withSkills(system: string | null, skills: readonly SkillSummary[]): string | null {
  const block = skillsSystemPrompt(skills);
  if (!block) return system;
  return system && system.trim() !== '' ? `${system}\n\n${block}` : block;
}

/**
 * The skill a `load_skill` call names: its id, else its exact name (case-insensitive), else the one
 * skill whose id or name appears in the argument (models sometimes pass a sentence). Null when none
 * or several match.
 */
export function findSkill<S extends SkillSummary>(skills: readonly S[], argument: unknown): S | null {
  const text = typeof argument === 'string' ? argument.trim() : '';
  if (!text) return null;
  const byId = skills.find((s) => s.id === text);
  if (byId) return byId;
  const lower = text.toLowerCase();
  const byName = skills.filter((s) => s.name.toLowerCase() === lower);
  if (byName.length === 1) return byName[0];
  const mentioned = skills.filter((s) => text.includes(s.id) || lower.includes(s.name.toLowerCase()));
  return mentioned.length === 1 ? mentioned[0] : null;
}

/** What the tool answers: the content, or an error text listing the ids the model may use. */
export function loadSkillResult(skills: readonly SkillContent[], input: Record<string, unknown>): { content: string; isError: boolean; skillId: string | null } {
  const skill = findSkill(skills, input.skill);
  if (!skill) {
    const known = skills.map((s) => `${s.id} (${s.name})`).join(', ') || 'none';
    return { content: `No such skill: ${String(input.skill ?? '')}. Active skills: ${known}.`, isError: true, skillId: null };
  }
  return { content: `# Skill: ${skill.name}\n\n${skill.content}`, isError: false, skillId: skill.id };
}
