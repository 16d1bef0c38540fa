import { DomainError } from '../shared/decider.js';
import type { FormField } from './vacancy-events.js';
import { vacancyNotFound } from './vacancy-decide.js';
import type { VacancyState } from './vacancy-state.js';

/**
 * What an application asks of its vacancy, decided on the vacancy's folded state before anything is
 * stored (no CV read, no duplicate claim for a vacancy that cannot take it). Pure: the caller loads the
 * vacancy's stream.
 */

/** Longest answer per question type, in characters. */
export const ANSWER_MAX_CHARS: Record<FormField['type'], number> = { text: 1000, textarea: 10_000, url: 2000, email: 254, number: 40 };

/**
 * The organization the application goes to: the vacancy's. `claimedOrgId` is the form's `orgId` or
 * CAREERS_ORG_ID (accepted for clients older than vacancies): it must agree.
 */
export function applicationOrgOf(vacancy: VacancyState, claimedOrgId: string | null): string {
  if (!vacancy.exists) throw vacancyNotFound();
  if (claimedOrgId !== null && claimedOrgId !== vacancy.orgId) {
    throw new DomainError('VACANCY_ORG_MISMATCH', 'the vacancy belongs to another organization than the one named', 'invalid', { field: 'body.orgId' });
  }
  if (vacancy.status !== 'open') throw new DomainError('VACANCY_CLOSED', 'this vacancy is closed and takes no more applications', 'conflict', { vacancyId: vacancy.vacancyId });
  return vacancy.orgId;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

function problemOf(field: FormField, value: string): string | null {
  if (value.length > ANSWER_MAX_CHARS[field.type]) return `at most ${ANSWER_MAX_CHARS[field.type]} characters`;
  switch (field.type) {
    case 'url': {
      // Only web addresses: a `javascript:` or `data:` URL shown to staff as a link would be a trap.
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return 'must be an http(s) URL';
      }
      return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http(s) URL';
    }
    case 'email':
      return EMAIL.test(value) ? null : 'must be an email address';
    case 'number':
      return NUMBER.test(value) ? null : 'must be a number';
    default:
      return null;
  }
}

/**
 * The answers to a vacancy's questions, trimmed, empty ones dropped. Refused with VALIDATION_FAILED
 * naming every bad `body.answers.<name>`: a required question unanswered, an answer of the wrong
 * shape, or an answer to no question of this vacancy.
 */
export function checkAnswers(fields: readonly FormField[], answers: Readonly<Record<string, string>>): Record<string, string> {
  const problems: { field: string; message: string }[] = [];
  const kept: Record<string, string> = {};
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(answers)) {
    if (!byName.has(name)) problems.push({ field: `body.answers.${name}`, message: 'not a question of this vacancy' });
  }
  for (const field of fields) {
    const value = (Object.hasOwn(answers, field.name) ? answers[field.name]! : '').trim();
    if (value === '') {
      if (field.required) problems.push({ field: `body.answers.${field.name}`, message: `required: ${field.label}` });
      continue;
    }
    const problem = problemOf(field, value);
    if (problem) problems.push({ field: `body.answers.${field.name}`, message: problem });
    else kept[field.name] = value;
  }
  if (problems.length > 0) throw new DomainError('VALIDATION_FAILED', problems.map((p) => `${p.field}: ${p.message}`).join('; '), 'invalid', { fields: problems });
  return kept;
}
