import type { OperationEvent } from '../domain/operations/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore, EventSubscription } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { ProjectionRebuilder } from '../ports/projections.js';
import { recordProjectionRebuild } from './operations.js';

export interface ProjectionControlPorts {
  events: EventStore;
  /** The projectors of this process. */
  projections: ProjectionRebuilder;
  logger: Logger;
  clock: Clock;
  newId(): string;
}

/**
 * Carries out rebuild requests (ProjectionRebuildRequested) in the process that runs the
 * projectors, whichever API process received the request, and records the outcome. Only requests
 * made after start are served: at start an embedded read store is rebuilt anyway.
 */
export class ProjectionControl {
  private subscription: EventSubscription | null = null;
  private done: Promise<void> | null = null;

  constructor(private readonly ports: ProjectionControlPorts) {}

  async start(): Promise<void> {
    const { events, logger } = this.ports;
    const subscription = events.subscribe({ after: await events.headPosition(), categories: ['projection'] });
    this.subscription = subscription;
    this.done = (async () => {
      for await (const event of subscription) await this.handle(event as RecordedEvent & OperationEvent);
    })().catch((err) => logger.error({ err }, 'projection control stopped'));
  }

  private async handle(event: RecordedEvent & OperationEvent): Promise<void> {
    const { events, projections, logger, clock } = this.ports;
    if (event.type !== 'ProjectionRebuildRequested' || !projections.has(event.data.name)) return;
    const { name, requestId } = event.data;
    const context = {
      actorId: event.metadata.actorId, orgId: null, workspaceId: null, correlationId: event.metadata.correlationId,
      causationId: event.id, requestId: this.ports.newId(), now: clock.now(),
    };
    try {
      const result = await projections.rebuild(name);
      await recordProjectionRebuild(events, { ...context, now: clock.now() }, name, requestId, result);
    } catch (err) {
      logger.error({ err, projection: name }, 'projection rebuild failed');
      await recordProjectionRebuild(events, { ...context, now: clock.now() }, name, requestId, { reason: (err as Error).message });
    }
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.done;
  }
}
