import { existsSync, readFileSync } from 'node:fs';
import { waitUntil } from './wait.js';

/**
 * Spans as the OpenTelemetry Collector's file exporter writes them (one OTLP/JSON
 * ExportTraceServiceRequest per line: resourceSpans → scopeSpans → spans), flattened with their
 * resource's attributes, so a test can find one trace and check its tree.
 */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  status: { code?: number; message?: string };
  links: Array<{ traceId: string; spanId: string }>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };

function valueOf(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: Array<{ key: string; value: AnyValue }> | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** Every span in the file (an unfinished last line is left for the next read). */
export function readSpans(file: string): CollectedSpan[] {
  if (!existsSync(file)) return [];
  const spans: CollectedSpan[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let request: { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }> };
    try {
      request = JSON.parse(line);
    } catch {
      continue;
    }
    for (const rs of request.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: String(s.traceId ?? ''),
            spanId: String(s.spanId ?? ''),
            parentSpanId: String(s.parentSpanId ?? ''),
            name: String(s.name ?? ''),
            kind: Number(s.kind ?? 0),
            attributes: attributesOf(s.attributes as Array<{ key: string; value: AnyValue }>),
            resource,
            status: (s.status as CollectedSpan['status']) ?? {},
            links: ((s.links as Array<{ traceId?: string; spanId?: string }>) ?? []).map((l) => ({ traceId: String(l.traceId ?? ''), spanId: String(l.spanId ?? '') })),
          });
        }
      }
    }
  }
  return spans;
}

/** The spans of one trace once `complete` says they are all there (the collector and the SDK batch). */
export function waitForTrace(file: string, traceId: string, complete: (spans: CollectedSpan[]) => boolean, timeoutMs = 30_000): Promise<CollectedSpan[]> {
  return waitUntil(
    `the trace ${traceId} in ${file}`,
    async () => {
      const spans = readSpans(file).filter((s) => s.traceId === traceId);
      return complete(spans) ? spans : null;
    },
    timeoutMs,
    250,
  );
}
