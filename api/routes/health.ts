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
      503: {
        description: 'a port is down: success false, status degraded, error.code DEGRADED, ports as above',
        schema: z.object({
          success: z.literal(false),
          status: z.literal('degraded'),
          role: z.string(),
          ports: z.record(z.string(), portSchema),
          error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
        }),
      },
    },
    async handler({ services }) {
      const ports = {
        eventStore: await probe(services.eventStore.adapter, () => services.eventStore.health()),
        readStore: await probe(services.readStore.adapter, () => services.readStore.health()),
        bus: await probe(services.bus.adapter, () => services.bus.health()),
      };
      const ok = Object.values(ports).every((p) => p.ok);
      if (ok) return { status: 200, body: { success: true, status: 'ok', role: services.role, ports } };
      const down = Object.entries(ports).filter(([, p]) => !p.ok).map(([name]) => name);
      return {
        status: 503,
        body: { success: false, status: 'degraded', role: services.role, ports, error: { code: 'DEGRADED', message: `not available: ${down.join(', ')}` } },
      };
    },
  }),
];
