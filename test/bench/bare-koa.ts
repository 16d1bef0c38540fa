/**
 * The same-run reference of the HTTP benchmarks: the service's stack minus the service. A `new Koa()`
 * app with the service's own body parser (api/middleware/body.ts, which replaced koa-body; see the
 * README's design section) echoing the JSON it received.
 */
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { bodyParser } from '../../api/middleware/body.js';
import type { EventStore } from '../../ports/event-store.js';

/**
 * `append`: each POST also appends one event (the request's body) to its own stream of this store
 * before answering: the least a service that records every run in a durable log must do per
 * request, so its share of bare Koa is a ceiling for any such service (issue 29).
 */
export async function startBareKoa(options: { status?: number; append?: EventStore } = {}): Promise<Server> {
  const app = new Koa();
  app.use(bodyParser({ limit: 1_048_576 }));
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') return;
    if (options.append) {
      const id = randomUUID();
      const metadata = { actorId: null, orgId: null, workspaceId: null, correlationId: id, causationId: null, requestId: id, occurredAt: new Date().toISOString() };
      await options.append.append(`floor-${id}`, [{ id, type: 'FloorRecorded', data: { body: ctx.request.body }, metadata }], 'no_stream');
    }
    if (options.status) ctx.status = options.status;
    ctx.body = { success: true, received: ctx.request.body };
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export const BARE_KOA_LABEL = 'bare Koa (same body parser, POST → small JSON)';
export const FLOOR_LABEL = 'floor: bare Koa + one durable append per request (SQLite, fsync, group commit)';
