import { decider, type Decider } from '../shared/decider.js';
import { decideApplication, decideDedupe, type ApplicationCommand, type DedupeCommand } from './decide.js';
import { careerEventSchemas, type CareerEvent } from './events.js';
import { evolveApplication, evolveDedupe, initialApplicationState, initialDedupeState, type ApplicationState, type DedupeState } from './state.js';
import { decideVacancy, type VacancyCommand } from './vacancy-decide.js';
import { vacancyEventSchemas, type VacancyEvent } from './vacancy-events.js';
import { evolveVacancy, initialVacancyState, type VacancyState } from './vacancy-state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './vacancy-events.js';
export * from './vacancy-state.js';
export * from './vacancy-decide.js';
export * from './vacancy-apply.js';

/**
 * Careers: applications to an organization's vacancies, sent by people without an account. An
 * application's personal fields are sealed under its own key (kept outside the log), so deleting it
 * crypto-shreds them in every copy of the log. A second decider keeps one application per
 * (organization, vacancy, email) within 24 hours. A third holds the vacancies an organization
 * publishes (`vacancy-<id>`): an application names one, and goes to its organization.
 */
export const applicationDecider: Decider<ApplicationCommand, ApplicationState, CareerEvent> = decider(initialApplicationState, evolveApplication, decideApplication, careerEventSchemas);
export const applicationDedupeDecider: Decider<DedupeCommand, DedupeState, CareerEvent> = decider(initialDedupeState, evolveDedupe, decideDedupe, careerEventSchemas);
export const vacancyDecider: Decider<VacancyCommand, VacancyState, VacancyEvent> = decider(initialVacancyState, evolveVacancy, decideVacancy, vacancyEventSchemas);
