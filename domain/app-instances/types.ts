import type { AppInstanceType, Json, JsonObject } from './events.js';
import { formatPointer } from './json-ops.js';

/**
 * The instance types: each declares the JSON Schema (draft-07) of its data, the data a new instance
 * starts with, the rules a schema cannot say (ids unique, a card's status is a column), and the
 * conventions a worker agent follows (the playbook's). The schemas are plain data here; a JSON
 * Schema validator (ajv, in commands/app-instances-data.ts) applies them — domain/ stays free of
 * packages not judged pure.
 */
export interface DataProblem {
  /** JSON Pointer into the data. */
  pointer: string;
  message: string;
}

export interface AppInstanceTypeDef {
  id: AppInstanceType;
  title: string;
  description: string;
  schema: JsonObject;
  initialData(): JsonObject;
  /** Relations between items (uniqueness, references), checked after the schema. */
  invariants(data: JsonObject): DataProblem[];
  /** What a worker agent must keep to (playbook). */
  conventions: string[];
}

const id = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' };
const isoDate = { type: 'string', maxLength: 40, pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?([Zz]|[+-][0-9]{2}:[0-9]{2})?)?$' };
const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: 'null' }] });
const labels = { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 50 } };
const metadata = { type: 'object', maxProperties: 50 };

const kanbanSchema: JsonObject = {
  $id: 'app-instance-kanban',
  title: 'Kanban board data',
  type: 'object',
  additionalProperties: false,
  required: ['columns', 'cards'],
  properties: {
    columns: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title'],
        properties: { id, title: { type: 'string', minLength: 1, maxLength: 200 }, order: { type: 'number' }, wipLimit: nullable({ type: 'integer', minimum: 0 }) },
      },
    },
    cards: {
      type: 'array',
      maxItems: 5000,
      items: {
        title: 'KanbanCard',
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title', 'status'],
        properties: {
          id,
          title: { type: 'string', minLength: 1, maxLength: 500 },
          description: { type: 'string', maxLength: 20000 },
          status: id,
          assignee: nullable({ type: 'string', minLength: 1, maxLength: 200 }),
          labels,
          due: nullable(isoDate),
          order: { type: 'number' },
          metadata,
        },
      },
    },
    settings: metadata,
  },
};

export const JOB_STATUSES = ['wishlist', 'applied', 'screening', 'interviewing', 'offer', 'accepted', 'rejected', 'withdrawn'] as const;

const jobTrackerSchema: JsonObject = {
  $id: 'app-instance-job_tracker',
  title: 'Job tracker data',
  type: 'object',
  additionalProperties: false,
  required: ['applications'],
  properties: {
    applications: {
      type: 'array',
      maxItems: 5000,
      items: {
        title: 'JobApplication',
        type: 'object',
        additionalProperties: false,
        required: ['id', 'company', 'position', 'status'],
        properties: {
          id,
          company: { type: 'string', minLength: 1, maxLength: 200 },
          position: { type: 'string', minLength: 1, maxLength: 200 },
          status: { type: 'string', enum: [...JOB_STATUSES] },
          url: nullable({ type: 'string', maxLength: 2000, pattern: '^https?://' }),
          location: nullable({ type: 'string', maxLength: 200 }),
          salary: nullable({ type: 'string', maxLength: 200 }),
          appliedAt: nullable(isoDate),
          nextAction: nullable({ type: 'string', maxLength: 500 }),
          nextActionAt: nullable(isoDate),
          notes: { type: 'string', maxLength: 20000 },
          contacts: {
            type: 'array',
            maxItems: 20,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name'],
              properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, email: { type: 'string', maxLength: 320 }, role: { type: 'string', maxLength: 200 } },
            },
          },
          labels,
          order: { type: 'number' },
          metadata,
        },
      },
    },
    settings: metadata,
  },
};

type Item = { id?: Json };
function duplicateIds(items: Json, pointer: string, what: string): DataProblem[] {
  if (!Array.isArray(items)) return [];
  const seen = new Map<string, number>();
  const problems: DataProblem[] = [];
  items.forEach((item, i) => {
    const itemId = (item as Item | null)?.id;
    if (typeof itemId !== 'string') return;
    const first = seen.get(itemId);
    if (first !== undefined) problems.push({ pointer: `${pointer}/${i}/id`, message: `${what} id ${JSON.stringify(itemId)} is already used at ${pointer}/${first}` });
    else seen.set(itemId, i);
  });
  return problems;
}

export const APP_INSTANCE_TYPES: Record<AppInstanceType, AppInstanceTypeDef> = {
  kanban: {
    id: 'kanban',
    title: 'Kanban board',
    description: 'Columns of cards (KanbanCard: id, title, description, status = a column id, assignee, labels, due, order).',
    schema: kanbanSchema,
    initialData: () => ({
      columns: [
        { id: 'todo', title: 'To do', order: 0 },
        { id: 'doing', title: 'In progress', order: 1 },
        { id: 'done', title: 'Done', order: 2 },
      ],
      cards: [],
    }),
    invariants(data) {
      const problems = [...duplicateIds(data.columns, '/columns', 'column'), ...duplicateIds(data.cards, '/cards', 'card')];
      const columnIds = new Set(Array.isArray(data.columns) ? data.columns.map((c) => (c as Item).id) : []);
      if (Array.isArray(data.cards)) {
        data.cards.forEach((card, i) => {
          const status = (card as { status?: Json }).status;
          if (typeof status === 'string' && !columnIds.has(status)) problems.push({ pointer: formatPointer(['cards', i, 'status']), message: `status ${JSON.stringify(status)} is not the id of a column` });
        });
      }
      return problems;
    },
    conventions: [
      'A card\'s `status` is the `id` of the column it sits in; moving a card is changing its `status` (and `order`).',
      'Card and column ids are unique and never reused; create ids as short slugs or random strings.',
      '`order` sorts cards within a column (ascending); leave gaps (10, 20, 30) so a move changes one card.',
      '`due` is an ISO date (YYYY-MM-DD) or date-time; `assignee` is a person\'s name or email, or null.',
      'Respect a column\'s `wipLimit` when moving cards into it.',
    ],
  },
  job_tracker: {
    id: 'job_tracker',
    title: 'Job tracker',
    description: `Job applications (JobApplication: id, company, position, status (${JOB_STATUSES.join(', ')}), url, location, salary, appliedAt, nextAction, nextActionAt, notes, contacts, labels, order).`,
    schema: jobTrackerSchema,
    initialData: () => ({ applications: [] }),
    invariants: (data) => duplicateIds(data.applications, '/applications', 'application'),
    conventions: [
      `An application moves forward through ${JOB_STATUSES.slice(0, 6).join(' → ')}; it may end in rejected or withdrawn at any point.`,
      'Set `appliedAt` when the status first becomes applied; keep `nextAction`/`nextActionAt` current after every contact.',
      'Append to `notes`; never delete what a person wrote.',
      'Application ids are unique and never reused.',
    ],
  },
};

export function isAppInstanceType(type: string): type is AppInstanceType {
  return Object.prototype.hasOwnProperty.call(APP_INSTANCE_TYPES, type);
}
