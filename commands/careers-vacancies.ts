import { vacancyDecider, vacancyNotFound, vacancyStreamId, type FormField, type VacancyCommand, type VacancyStatus } from '../domain/careers/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, PreconditionFailedError, type CommandContext, type WithoutAt } from './handle.js';

/** The folded state of a vacancy, read from its stream (applications check theirs here, never in a read model). */
export function loadVacancy(store: EventStore, vacancyId: string) {
  return loadState(store, vacancyStreamId(vacancyId), vacancyDecider);
}

/**
 * Every vacancy write: one stream per vacancy, time from the context, `expectedRevision` the client's
 * If-Match. A 412 about a vacancy the caller cannot see would reveal that it exists, so it becomes
 * VACANCY_NOT_FOUND.
 */
async function execute(store: EventStore, context: CommandContext, vacancyId: string, command: WithoutAt<VacancyCommand>, expectedRevision?: number) {
  try {
    return await handleAtContextTime(store, context, vacancyStreamId(vacancyId), vacancyDecider, command, expectedRevision);
  } catch (err) {
    if (err instanceof PreconditionFailedError) {
      const { state } = await loadVacancy(store, vacancyId);
      if (!state.exists || state.orgId !== context.orgId) throw vacancyNotFound();
    }
    throw err;
  }
}

const orgOf = (context: CommandContext) => context.orgId ?? '';
const byOf = (context: CommandContext) => context.actorId ?? 'unknown';

export interface NewVacancy {
  title: string;
  description: string;
  status: VacancyStatus;
  formFields: FormField[];
}

export function createVacancy(store: EventStore, context: CommandContext, vacancyId: string, input: NewVacancy) {
  return execute(store, context, vacancyId, { type: 'CreateVacancy', vacancyId, orgId: orgOf(context), ...input, by: byOf(context) });
}

export function updateVacancy(store: EventStore, context: CommandContext, vacancyId: string, changes: Partial<Omit<NewVacancy, 'status'>>, expectedRevision?: number) {
  return execute(store, context, vacancyId, { type: 'UpdateVacancy', orgId: orgOf(context), ...changes, by: byOf(context) }, expectedRevision);
}

export function setVacancyOpen(store: EventStore, context: CommandContext, vacancyId: string, open: boolean, expectedRevision?: number) {
  return execute(store, context, vacancyId, { type: open ? 'ReopenVacancy' : 'CloseVacancy', orgId: orgOf(context), by: byOf(context) }, expectedRevision);
}
