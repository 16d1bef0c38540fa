/**
 * The same-run reference of the HTTP benchmarks: the service's stack minus the service. A `new Koa()`
 * app with the service's own body parser (api/middleware/body.ts, which replaced koa-body; see the
 * README's design section) echoing the JSON it received.
 */
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { bodyParser } from '../../api/middleware/body.js';

export async function startBareKoa(options: { status?: number } = {}): Promise<Server> {
  const app = new Koa();
  app.use(bodyParser({ limit: 1_048_576 }));
  app.use((ctx) => {
    if (ctx.method !== 'POST') return;
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
