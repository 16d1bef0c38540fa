import type { Config, Role } from './config.js';
import type { Bus } from './ports/bus.js';
import type { EventStore } from './ports/event-store.js';
import type { Logger } from './ports/logger.js';
import type { CheckpointStore, ReadStore } from './ports/read-store.js';
import type { ProjectionRunner } from './projection-runner.js';

/** What the composition root hands to routes and consumers. */
export interface Services {
  config: Config;
  role: Role;
  logger: Logger;
  eventStore: EventStore;
  readStore: ReadStore;
  /** Durable positions of consumers and the relay (the embedded read store's are in memory). */
  checkpoints: CheckpointStore;
  bus: Bus;
  projections: ProjectionRunner;
  now(): Date;
  newId(): string;
}
