import { randomUUID } from 'node:crypto';
import { recordProjectionRebuild } from '../commands/operations.js';
import type { OperationEvent } from '../domain/operations/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { EventStore, EventSubscription } from './ports/event-store.js';
import type { Logger } from './ports/logger.js';
import type { ProjectionRunner } from './projection-runner.js';

/**
 * Carries out rebuild requests (ProjectionRebuildRequested) in the process that runs the
 * projectors, whichever API process received the request, and records the outcome. Only requests
 * made after start are served: at start an embedded read store is rebuilt anyway.
 */
export class ProjectionControl {
  private subscription: EventSubscription | null = null;
  private done: Promise<void> | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  async start(): Promise<void> {
    const subscription = this.events.subscribe({ after: await this.events.headPosition(), categories: ['projection'] });
    this.subscription = subscription;
    this.done = (async () => {
      for await (const event of subscription) await this.handle(event as RecordedEvent & OperationEvent);
    })().catch((err) => this.logger.error({ err }, 'projection control stopped'));
  }

  private async handle(event: RecordedEvent & OperationEvent): Promise<void> {
    if (event.type !== 'ProjectionRebuildRequested' || !this.runner.has(event.data.name)) return;
    const { name, requestId } = event.data;
    const context = {
      actorId: event.metadata.actorId, orgId: null, workspaceId: null, correlationId: event.metadata.correlationId,
      causationId: event.id, requestId: randomUUID(), now: this.now(),
    };
    try {
      const result = await this.runner.rebuild(name);
      await recordProjectionRebuild(this.events, { ...context, now: this.now() }, name, requestId, result);
    } catch (err) {
      this.logger.error({ err, projection: name }, 'projection rebuild failed');
      await recordProjectionRebuild(this.events, { ...context, now: this.now() }, name, requestId, { reason: (err as Error).message });
    }
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.done;
  }
}
