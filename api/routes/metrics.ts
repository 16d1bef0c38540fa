import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../../domain/shared/decider.js';
import { PERFORMANCE_WINDOWS } from '../../ports/metrics.js';
import { defineRoute } from '../route.js';
import { requireOperator } from './operations.js';

/**
 * This process's metrics. Both views are per process (a split deployment has one per process;
 * Prometheus scrapes each): GET /metrics/performance (JSON: percentiles, throughput and error
 * rates over 1/5/15 minutes) and GET /metrics (Prometheus text). Both are service-wide, so
 * operators only; /metrics also takes `Authorization: Bearer <METRICS_TOKEN>` for a scraper that
 * holds no user account.
 */

const summary = z.object({
  count: z.number(),
  throughputPerSecond: z.number(),
  errors: z.number(),
  errorRate: z.number(),
  p50Ms: z.number().nullable(),
  p90Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  maxMs: z.number().nullable(),
});
const series = z.object({ name: z.string(), windows: z.object(Object.fromEntries(PERFORMANCE_WINDOWS.map((w) => [w, summary])) as Record<(typeof PERFORMANCE_WINDOWS)[number], typeof summary>) });

/** Constant-time comparison of a presented token with the configured one (hashes first: equal lengths). */
function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export const metricsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/metrics/performance',
    operationId: 'performanceMetrics',
    summary: "this process's latency percentiles (ms), throughput and error rates over 1, 5 and 15 minutes: HTTP routes, node kinds, LLM provider calls (operators only)",
    tag: 'Metrics',
    auth: 'bearer',
    permission: 'view_resources',
    responses: {
      200: {
        description: 'per series and window; HTTP errors are answers ≥ 500, node errors failed nodes, provider errors failed calls (aborted ones are not errors)',
        schema: z.object({
          success: z.literal(true),
          at: z.string(),
          windows: z.array(z.enum(PERFORMANCE_WINDOWS)),
          process: z.object({ id: z.string(), role: z.string(), host: z.string(), pid: z.number(), startedAt: z.string(), uptimeSeconds: z.number() }),
          http: z.array(series),
          nodes: z.array(series),
          providers: z.array(series),
        }),
      },
      401: { description: 'no or invalid credentials' },
      403: { description: 'not an operator (OPERATOR_ONLY)' },
    },
    async handler(input) {
      await requireOperator(input);
      return { status: 200, body: { success: true, windows: [...PERFORMANCE_WINDOWS], ...input.services.metrics.performance() } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/metrics',
    operationId: 'prometheusMetrics',
    summary: "this process's metrics in the Prometheus text format (added operation): Authorization: Bearer <METRICS_TOKEN>, or an operator's credential",
    tag: 'Metrics',
    // Checked in the handler: the scraper's token is not a user credential.
    auth: 'none',
    responses: {
      200: { description: 'text/plain; version=0.0.4: flowsvc_* counters (_total) and histograms (_seconds), process_* and nodejs_*' },
      401: { description: 'no credential, or neither the metrics token nor a valid user credential' },
      403: { description: 'a valid user credential that is not an operator (OPERATOR_ONLY)' },
    },
    async handler(input) {
      const { services, koa } = input;
      const header = koa.get('authorization');
      const presented = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
      const token = services.config.METRICS_TOKEN;
      if (!(token && presented && tokenMatches(presented, token))) {
        if (!header) throw new DomainError('UNAUTHENTICATED', 'send the metrics token or an operator credential as Authorization: Bearer …', 'unauthenticated');
        const principal = await services.auth.authenticate(header);
        await requireOperator({ ...input, principal });
      }
      const { contentType, text } = await services.metrics.prometheus();
      return { status: 200, body: text, headers: { 'Content-Type': contentType } };
    },
  }),
];
