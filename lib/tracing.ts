import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';

/**
 * The service's tracing helpers over the OpenTelemetry API. The API package is what instrumented
 * code imports by design (it is a no-op until an SDK registers); the SDK and the exporters stay in
 * infra/telemetry, registered by the composition root only when OTEL_* variables ask for it. Until
 * then every helper here returns at once: tracing off costs one boolean test per call site.
 */

let enabled = false;

/** Called by infra/telemetry once a tracer provider, a context manager and the W3C propagator are registered. */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

export const tracingEnabled = (): boolean => enabled;

export { SpanKind };
export type { Span, Attributes };

/** Attribute names of our own (the GenAI and HTTP ones follow the OpenTelemetry semantic conventions). */
export const ATTR = {
  runId: 'flows.run.id',
  flowId: 'flows.flow.id',
  flowVersion: 'flows.flow.version',
  nodeId: 'flows.node.id',
  nodeKind: 'flows.node.kind',
  workflowId: 'flows.workflow.id',
  agentId: 'flows.agent.id',
  sessionId: 'flows.agent.session.id',
  orgId: 'flows.org.id',
  status: 'flows.status',
  /** The log position of the event a span corresponds to (the stream and revision when the position is not known yet). */
  eventPosition: 'flows.event.position',
  eventStream: 'flows.event.stream',
  eventRevision: 'flows.event.revision',
  eventType: 'flows.event.type',
  requestId: 'flows.request.id',
} as const;

const tracer = () => trace.getTracer('flow-automation-service');

/** A parent context from a W3C `traceparent` (and `tracestate`); the active context when there is none. */
function contextOf(traceparent: string | undefined, tracestate?: string): Context {
  if (!traceparent) return context.active();
  return propagation.extract(ROOT_CONTEXT, tracestate ? { traceparent, tracestate } : { traceparent });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent from a stored or received `traceparent` instead of the active context. */
  traceparent?: string;
  links?: Link[];
  startTime?: Date;
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles: an error is recorded on the
 * span (status ERROR, exception event) and thrown on. `span` is undefined while tracing is off.
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!enabled) return fn(undefined);
  const parent = contextOf(options.traceparent);
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links, startTime: options.startTime }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span the caller ends itself (for work that is not one async function, like an HTTP request). */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  if (!enabled) return undefined;
  const parent = contextOf(options.traceparent);
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links, startTime: options.startTime }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` with `ctx` active (from startSpan). */
export const withContext = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);

export function markFailed(span: Span, err: unknown): void {
  const e = err as { message?: unknown; name?: unknown; code?: unknown };
  span.recordException({ name: typeof e?.name === 'string' ? e.name : 'Error', message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) });
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(e?.message ?? err).slice(0, 200) });
}

export function markError(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 200) });
}

/** Runs `fn` with the context a stored or received `traceparent` names as the active one (fn as is when there is none or tracing is off). */
export function withTraceparent<T>(traceparent: string | undefined, fn: () => T): T {
  if (!enabled || !traceparent) return fn();
  return context.with(contextOf(traceparent), fn);
}

/**
 * The W3C `traceparent` of the active span, for events' metadata and outgoing messages; undefined
 * when there is none. A span sampled out still gives one (flag 00), so the next hop keeps the decision.
 */
export function currentTraceparent(): string | undefined {
  if (!enabled || !trace.getActiveSpan()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Adds `traceparent` (and `tracestate`) of the active span to outgoing HTTP headers. */
export function injectTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (!enabled) return headers;
  propagation.inject(context.active(), headers);
  return headers;
}

/** Attributes on the active span, if one is recording. */
export function annotateActiveSpan(attributes: Attributes): void {
  if (!enabled) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The span's event: stream and revision always, the log position once the event is in the log. */
export function eventAttributes(at: { streamId: string; revision: number; position: number | null } | undefined): Attributes {
  if (!at) return {};
  return { [ATTR.eventStream]: at.streamId, [ATTR.eventRevision]: at.revision, ...(at.position !== null ? { [ATTR.eventPosition]: at.position } : {}) };
}

/** A link to the span a `traceparent` names (what caused work that belongs to another trace); none when there is none. */
export function linksTo(traceparent: string | undefined): Link[] {
  if (!enabled || !traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext ? [{ context: spanContext }] : [];
}
