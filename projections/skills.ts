import type { RecordedEvent } from '../domain/shared/events.js';
import { SKILL_CATEGORY, skillActivationFor, type SkillActivation, type SkillContent, type SkillEvent, type SkillScope } from '../domain/skills/index.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import type { SkillsReadModel } from '../ports/skills.js';
import { getFlow } from './flows.js';
import { ownedCollections, type Projector } from './projector.js';

export interface SkillDoc extends Doc {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  name: string;
  description: string;
  content: string;
  enabled: boolean;
  /** Per-flow overrides as a list (flow ids never become field names). */
  flowOverrides: Array<{ flowId: string; enabled: boolean }>;
  createdAt: string;
  updatedAt: string;
  /** Revision of the last event applied: a redelivered event is skipped. */
  version: number;
  /** A deleted skill stays as a tombstone, so a redelivered SkillCreated cannot bring it back. */
  deleted: boolean;
}

const SKILLS = 'skills';
const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);

/** One document per skill; a deleted one stays as a tombstone (`deleted: true`, no content) that no query returns. */
export const skillsProjector: Projector = {
  name: 'skills',
  categories: [SKILL_CATEGORY],
  ...ownedCollections({ [SKILLS]: [{ keys: { ownerId: 1, orgId: 1, workspaceId: 1, createdAt: -1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & SkillEvent;
    const skillId = idOf(recorded.streamId);
    const skills = store.collection<SkillDoc>(SKILLS);
    const revision = recorded.revision;
    const doc = await skills.findOne({ _id: skillId });
    if (event.type === 'SkillCreated') {
      if (doc) return;
      const d = event.data;
      await skills.replaceOne(
        { _id: skillId },
        {
          _id: skillId, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, name: d.name, description: d.description, content: d.content, enabled: d.enabled,
          flowOverrides: [], createdAt: d.at, updatedAt: d.at, version: revision, deleted: false,
        },
        { upsert: true },
      );
      return;
    }
    if (!doc || doc.version >= revision) return;
    const next: SkillDoc = { ...doc, version: revision };
    switch (event.type) {
      case 'SkillUpdated':
        Object.assign(next, { name: event.data.name, description: event.data.description, content: event.data.content, updatedAt: event.data.at });
        break;
      case 'SkillEnabledChanged':
        Object.assign(next, { enabled: event.data.enabled, updatedAt: event.data.at });
        break;
      case 'SkillDeleted':
        // The content goes with it; the tombstone keeps only what idempotence needs.
        Object.assign(next, { deleted: true, content: '', flowOverrides: [], updatedAt: event.data.at });
        break;
      case 'SkillFlowOverrideSet': {
        const rest = doc.flowOverrides.filter((o) => o.flowId !== event.data.flowId);
        next.flowOverrides = event.data.enabled === null ? rest : [...rest, { flowId: event.data.flowId, enabled: event.data.enabled }];
        next.updatedAt = event.data.at;
        break;
      }
      default:
        return;
    }
    await skills.replaceOne({ _id: skillId, version: doc.version }, next);
  },
};

export const skillProjectors: Projector[] = [skillsProjector];

// ---- queries (every one scoped: another tenant's skill does not exist) ----

/** The filter of a scope's skills: an organization's workspace is shared, a personal one is its owner's. */
export function scopeFilter(scope: SkillScope): Record<string, unknown> {
  return scope.orgId !== null ? { orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false } : { orgId: null, workspaceId: null, ownerId: scope.userId, deleted: false };
}

export function getSkill(store: ReadStore, scope: SkillScope, skillId: string) {
  return store.collection<SkillDoc>(SKILLS).findOne({ _id: skillId, ...scopeFilter(scope) });
}

export function listSkills(store: ReadStore, scope: SkillScope, options: { limit: number; cursor: string | null; enabled?: boolean }) {
  const filter = { ...scopeFilter(scope), ...(options.enabled !== undefined && { enabled: options.enabled }) };
  return store.collection<SkillDoc>(SKILLS).page(filter, { sort: { createdAt: 1 }, limit: options.limit, cursor: options.cursor });
}

/** Every skill of a scope (at most the per-owner limit), oldest first. */
export function allSkills(store: ReadStore, scope: SkillScope) {
  return store.collection<SkillDoc>(SKILLS).find(scopeFilter(scope), { sort: { createdAt: 1, _id: 1 } });
}

export interface FlowSkill {
  skill: SkillDoc;
  active: boolean;
  reason: SkillActivation;
}

/** The scope's skills with whether each is active for the flow and why. */
export async function skillsForFlow(store: ReadStore, scope: SkillScope, flowId: string): Promise<FlowSkill[]> {
  return (await allSkills(store, scope)).map((skill) => ({ skill, ...skillActivationFor(skill, flowId) }));
}

const contentOf = (d: SkillDoc): SkillContent => ({ id: d._id, name: d.name, description: d.description, content: d.content });

/** Whose skills a flow uses: its owner's, or its organization's workspace's; null for an unknown flow. */
async function flowScope(store: ReadStore, flowId: string): Promise<SkillScope | null> {
  const flow = await getFlow(store, flowId, null);
  return flow && { userId: flow.ownerId, orgId: flow.orgId, workspaceId: flow.workspaceId };
}

/** The port the run worker, agents and the assistant read skills through. */
export function skillsReadModel(store: ReadStore): SkillsReadModel {
  return {
    async activeForFlow(flowId, runScope) {
      const scope = runScope ?? (await flowScope(store, flowId));
      if (!scope) return [];
      return (await skillsForFlow(store, scope, flowId)).filter((s) => s.active).map((s) => contentOf(s.skill));
    },
    async activeInScope(scope, only) {
      const docs = await allSkills(store, scope);
      return docs.filter((d) => (only ? only.includes(d._id) : d.enabled)).map(contentOf);
    },
  };
}
