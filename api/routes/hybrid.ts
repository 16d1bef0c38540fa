import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { hybridStats } from '../../projections/hybrid.js';
import { defineRoute } from '../route.js';

/** Flow runs and workflows of the caller's scope side by side, over a window ending now. */

const WINDOWS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000, '30d': 2_592_000_000 } as const;
const windowNames = Object.keys(WINDOWS) as [keyof typeof WINDOWS, ...Array<keyof typeof WINDOWS>];

const stats = z.object({
  started: z.number(),
  completed: z.number(),
  failed: z.number(),
  canceled: z.number(),
  open: z.number(),
  durationMs: z.object({ p50: z.number().nullable(), p95: z.number().nullable(), samples: z.number(), sampled: z.boolean() }),
});

export const hybridRoutes = [
  defineRoute({
    method: 'GET',
    path: '/hybrid/stats',
    operationId: 'hybridStats',
    summary: "flow runs and workflows of the scope side by side over a window (1h, 24h default, 7d, 30d): started, completed, failed, canceled, open, p50/p95 duration (ms)",
    tag: 'Hybrid system',
    auth: 'bearer',
    permission: 'view_resources',
    query: z.strictObject({ window: z.enum(windowNames).default('24h') }),
    responses: {
      200: {
        description: 'started: started within the window; completed/failed/canceled: ended within it; open: not ended now; durations: start → end of those that ended within it',
        schema: z.object({
          success: z.literal(true),
          window: z.object({ name: z.enum(windowNames), from: z.string(), to: z.string() }),
          runs: stats,
          workflows: stats,
          total: stats.omit({ durationMs: true }),
        }),
      },
      400: { description: 'unknown window (VALIDATION_FAILED, query.window)' },
      401: { description: 'no or invalid credentials' },
      403: { description: 'the role lacks view_resources' },
    },
    async handler({ services, principal, query }) {
      const to = services.now();
      const from = new Date(to.getTime() - WINDOWS[query.window]);
      const result = await hybridStats(services.readStore, flowScopeOf(principal!), from);
      return { status: 200, body: { success: true, window: { name: query.window, from: from.toISOString(), to: to.toISOString() }, ...result } };
    },
  }),
];
