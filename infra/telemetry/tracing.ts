import { context, propagation, trace, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { ATTR, setTracingEnabled } from '../../lib/tracing.js';
import type { Logger } from '../../ports/logger.js';
import type { Config } from '../config/index.js';

/**
 * Registers the OpenTelemetry trace SDK when the standard variables ask for it: an OTLP endpoint
 * named, the SDK not disabled, the exporter not `none`. `@opentelemetry/sdk-trace` reads no
 * variables itself (unlike sdk-node, which would also pull metrics, logs and instrumentation
 * loading we do not use), so the sampler and batch settings are read here; the OTLP exporter reads
 * its endpoint, headers, timeout and certificates from the environment as the specification says.
 */

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

type TracingConfig = Pick<
  Config,
  | 'OTEL_SDK_DISABLED'
  | 'OTEL_SERVICE_NAME'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_PROTOCOL'
  | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
  | 'OTEL_TRACES_SAMPLER'
  | 'OTEL_TRACES_SAMPLER_ARG'
  | 'OTEL_BSP_SCHEDULE_DELAY'
  | 'OTEL_BSP_MAX_QUEUE_SIZE'
  | 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'
  | 'OTEL_BSP_EXPORT_TIMEOUT'
>;

export function tracingWanted(config: TracingConfig): boolean {
  if (config.OTEL_SDK_DISABLED === 'true' || config.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || config.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** The sampler OTEL_TRACES_SAMPLER names (default parentbased_always_on, as the specification says). */
export function samplerOf(config: Pick<TracingConfig, 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG'>): Sampler {
  const ratio = config.OTEL_TRACES_SAMPLER_ARG ?? 1;
  switch (config.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The ids a child span takes from its parent in this process, so an LLM, tool or HTTP span names its run, workflow or agent session too. */
const INHERITED = [ATTR.runId, ATTR.workflowId, ATTR.sessionId, ATTR.flowId, ATTR.nodeId] as const;

export const inheritIds: SpanProcessor = {
  onStart(span: Span, parentContext: Context) {
    const parent = trace.getSpan(parentContext) as Partial<Span> | undefined;
    const from = parent?.attributes;
    if (!from) return; // a remote parent (another process): its ids came with the event, on the span that continues it
    for (const key of INHERITED) if (from[key] !== undefined && span.attributes[key] === undefined) span.setAttribute(key, from[key]);
  },
  onEnd() {},
  forceFlush: async () => {},
  shutdown: async () => {},
};

/** Starts tracing for this process (once); `role` and the process id go into the resource. */
export function startTracing(config: TracingConfig, role: string, logger: Logger): Tracing {
  if (!tracingWanted(config)) return OFF;
  const json = (config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL) === 'http/json';
  const exporter = json ? new OtlpJsonExporter() : new OtlpProtoExporter();
  // OTEL_RESOURCE_ATTRIBUTES (envDetector) first, so OTEL_SERVICE_NAME and ours win where they overlap.
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({
      'service.name': config.OTEL_SERVICE_NAME ?? 'flow-automation-service',
      'service.instance.id': `${role}:${process.pid}`,
      'flows.role': role,
    }),
  );
  const processor = new BatchSpanProcessor({
    exporter,
    scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY,
    maxQueueSize: config.OTEL_BSP_MAX_QUEUE_SIZE,
    maxExportBatchSize: config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    exportTimeoutMillis: config.OTEL_BSP_EXPORT_TIMEOUT,
  });
  const provider = new TracerProvider({ resource, sampler: samplerOf(config), spanProcessors: [inheritIds, processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingEnabled(true);
  logger.info({ protocol: json ? 'http/json' : 'http/protobuf', sampler: config.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on' }, 'tracing: exporting spans over OTLP');
  return {
    enabled: true,
    async shutdown() {
      setTracingEnabled(false);
      await provider.shutdown().catch((err: Error) => logger.warn({ err: err.message }, 'tracing: the last spans could not be exported'));
      // Unregistered, so a later startTracing in this process (the benchmark) registers afresh.
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
