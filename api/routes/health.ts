import { z } from 'zod';
import { defineRoute } from '../route.js';

const portSchema = z.object({ adapter: z.string(), ok: z.boolean(), detail: z.string().optional() });

async function probe(adapter: string, check: () => Promise<{ ok: boolean; detail?: string }>) {
  try {
    return { adapter, ...(await check()) };
  } catch (err) {
    return { adapter, ok: false, detail: (err as Error).message };
  }
}

export const healthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/health',
    operationId: 'health',
    summary: 'health check (event store, read store, bus)',
    tag: 'System',
    auth: 'none',
    responses: {
      200: { description: 'every port is up', schema: z.object({ success: z.literal(true), status: z.literal('ok'), role: z.string(), ports: z.record(z.string(), portSchema) }) },
      503: { description: 'a port is down (same body with success false and status degraded)' },
    },
    async handler({ services }) {
      const ports = {
        eventStore: await probe(services.eventStore.adapter, () => services.eventStore.health()),
        readStore: await probe(services.readStore.adapter, () => services.readStore.health()),
        bus: await probe(services.bus.adapter, () => services.bus.health()),
      };
      const ok = Object.values(ports).every((p) => p.ok);
      return { status: ok ? 200 : 503, body: { success: ok, status: ok ? 'ok' : 'degraded', role: services.role, ports } };
    },
  }),
];
