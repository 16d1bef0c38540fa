import { z } from 'zod';

/**
 * The standard OpenTelemetry SDK variables the service honours for traces (spread into
 * configSchema; README "Tracing" mirrors it). Tracing is on only when an OTLP endpoint is named;
 * the exporter itself also reads OTEL_EXPORTER_OTLP_HEADERS, …_TIMEOUT, …_COMPRESSION and the
 * certificate variables, as the OpenTelemetry specification says.
 */
const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max).optional();
const protocol = z.enum(['http/protobuf', 'http/json', 'grpc']).optional();

export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export const telemetryConfigShape = {
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).optional(),
  OTEL_RESOURCE_ATTRIBUTES: z.string().max(4_000).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().regex(/^https?:\/\//, 'must be an http(s) URL').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().regex(/^https?:\/\//, 'must be an http(s) URL').optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_HEADERS: z.string().max(8_000).optional(),
  OTEL_TRACES_SAMPLER: z.enum(TRACE_SAMPLERS).optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_BSP_SCHEDULE_DELAY: positiveInt(600_000),
  OTEL_BSP_MAX_QUEUE_SIZE: positiveInt(1_000_000),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: positiveInt(100_000),
  OTEL_BSP_EXPORT_TIMEOUT: positiveInt(600_000),
} satisfies Record<string, z.ZodType>;

/** What the shape alone cannot say. */
export function telemetryConfigProblems(config: { OTEL_EXPORTER_OTLP_PROTOCOL?: string; OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: string }): string[] {
  const chosen = config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (chosen === 'grpc') return ['OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported by this service; use http/protobuf (the default) or http/json (collectors take OTLP over HTTP on port 4318)'];
  return [];
}
