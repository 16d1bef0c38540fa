import type { RecordedEvent } from '../domain/shared/events.js';
import { APPLICATION_CATEGORY, type ApplicationStatus, type CareerEvent, type CvFile } from '../domain/careers/index.js';
import type { PersonalDataVault } from '../ports/personal-data.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { type Projector, ownedCollections } from './projector.js';

export interface StatusChange {
  from: ApplicationStatus;
  to: ApplicationStatus;
  note: string | null;
  by: string;
  at: string;
}

/** The read model keeps the personal fields sealed as in the log: they are opened per request with the application's key. */
export interface ApplicationView extends Doc {
  orgId: string;
  vacancyId: string;
  status: ApplicationStatus;
  /** Set by ApplicationDeletionStarted: still listed until ApplicationDeleted (absent on older rows: false). */
  deleting?: boolean;
  personal: string;
  cv: CvFile;
  history: StatusChange[];
  receivedAt: string;
  updatedAt: string;
  version: number;
}

const COLLECTION = 'careers_applications';

export const careersProjector: Projector = {
  name: 'careers',
  categories: [APPLICATION_CATEGORY],
  ...ownedCollections({ [COLLECTION]: [{ keys: { orgId: 1, receivedAt: -1 } }, { keys: { orgId: 1, vacancyId: 1, status: 1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & CareerEvent;
    const applications = store.collection<ApplicationView>(COLLECTION);
    const id = recorded.streamId.slice(`${APPLICATION_CATEGORY}-`.length);
    switch (event.type) {
      case 'ApplicationReceived': {
        const d = event.data;
        await applications.replaceOne(
          { _id: id },
          { _id: id, orgId: d.orgId, vacancyId: d.vacancyId, status: 'received', personal: d.personal, cv: d.cv, history: [], receivedAt: d.receivedAt, updatedAt: d.receivedAt, version: recorded.revision },
          { upsert: true },
        );
        return;
      }
      case 'ApplicationStatusChanged':
        await applications.updateOne(
          { _id: id, version: { $lt: recorded.revision } },
          { $set: { status: event.data.to, updatedAt: event.data.at, version: recorded.revision }, $push: { history: event.data } },
        );
        return;
      case 'ApplicationDeletionStarted':
        await applications.updateOne({ _id: id, version: { $lt: recorded.revision } }, { $set: { deleting: true, updatedAt: event.data.at, version: recorded.revision } });
        return;
      case 'ApplicationDeleted':
        await applications.deleteOne({ _id: id });
        return;
    }
  },
};

export interface OpenedApplication {
  id: string;
  orgId: string;
  vacancyId: string;
  status: ApplicationStatus;
  /** A deletion began and has not finished (repeating the DELETE finishes it). */
  deleting: boolean;
  /** Null once the application's key was shredded (deleted while this page was read). */
  name: string | null;
  email: string | null;
  coverLetter: string | null;
  cvText: string | null;
  cvFilename: string | null;
  /** Answers to the vacancy's questions ({} before vacancies had any); null once shredded. */
  answers: Record<string, string> | null;
  cv: CvFile;
  history: StatusChange[];
  receivedAt: string;
  updatedAt: string;
  version: number;
}

async function openView(vault: PersonalDataVault, view: ApplicationView): Promise<OpenedApplication> {
  const plain = await vault.open(view._id, view.personal).catch(() => null);
  const p = plain ? (JSON.parse(plain) as { name: string; email: string; coverLetter: string | null; cvText: string; cvFilename: string; answers?: Record<string, string> }) : null;
  return {
    id: view._id,
    orgId: view.orgId,
    vacancyId: view.vacancyId,
    status: view.status,
    deleting: view.deleting === true,
    name: p?.name ?? null,
    email: p?.email ?? null,
    coverLetter: p?.coverLetter ?? null,
    cvText: p?.cvText ?? null,
    cvFilename: p?.cvFilename ?? null,
    answers: p ? (p.answers ?? {}) : null,
    cv: view.cv,
    history: view.history,
    receivedAt: view.receivedAt,
    updatedAt: view.updatedAt,
    version: view.version,
  };
}

export async function getApplication(store: ReadStore, vault: PersonalDataVault, orgId: string, applicationId: string): Promise<OpenedApplication | null> {
  const view = await store.collection<ApplicationView>(COLLECTION).findOne({ _id: applicationId, orgId });
  return view ? openView(vault, view) : null;
}

/** At most this many applications are opened to answer one page of a `q` search. */
export const SEARCH_SCAN_LIMIT = 1000;

/**
 * An organization's applications, newest first, filtered by vacancy and status in the read store.
 * `q` matches name, email, cover letter, CV text and answers case-insensitively: those are sealed, so the
 * candidates are opened page by page (at most SEARCH_SCAN_LIMIT per answer); a page of a search can
 * hold fewer than `limit` items while `nextCursor` still leads on.
 */
export async function listApplications(
  store: ReadStore,
  vault: PersonalDataVault,
  filter: { orgId: string; vacancyId?: string; status?: ApplicationStatus; q?: string },
  limit: number,
  cursor: string | null,
): Promise<{ items: OpenedApplication[]; nextCursor: string | null }> {
  const collection = store.collection<ApplicationView>(COLLECTION);
  const where = { orgId: filter.orgId, ...(filter.vacancyId ? { vacancyId: filter.vacancyId } : {}), ...(filter.status ? { status: filter.status } : {}) };
  const sort = { receivedAt: -1 as const };
  if (!filter.q) {
    const page = await collection.page(where, { sort, limit, cursor });
    return { items: await Promise.all(page.items.map((v) => openView(vault, v))), nextCursor: page.nextCursor };
  }
  const needle = filter.q.toLowerCase();
  const items: OpenedApplication[] = [];
  let next = cursor;
  let scanned = 0;
  do {
    const page = await collection.page(where, { sort, limit: limit - items.length, cursor: next });
    scanned += page.items.length;
    for (const view of page.items) {
      const opened = await openView(vault, view);
      const haystack = [opened.name, opened.email, opened.coverLetter, opened.cvText, ...Object.values(opened.answers ?? {})].filter(Boolean).join('\n').toLowerCase();
      if (haystack.includes(needle)) items.push(opened);
    }
    next = page.nextCursor;
  } while (next && items.length < limit && scanned < SEARCH_SCAN_LIMIT);
  return { items, nextCursor: next };
}
