import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, type Sampler, TraceIdRatioBasedSampler, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { SpanFields, TraceSpan, Tracer } from "./spans.ts";
import type { TracingSettings } from "./settings.ts";

// The OpenTelemetry SDK behind the router's spans: loaded only when tracing is on. Spans go to the
// OTLP/HTTP endpoint in batches (JSON); parents are passed explicitly, so no global context
// manager is registered and nothing outside the router's own spans is traced.

const propagator = new W3CTraceContextPropagator();
const headerGetter = { get: (carrier: Record<string, string>, key: string) => carrier[key], keys: (carrier: Record<string, string>) => Object.keys(carrier) };

function samplerOf(settings: TracingSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(settings.samplerArg ?? 1);
  switch (settings.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

class OtelSpan implements TraceSpan {
  private claimed = false;
  constructor(
    private readonly tracer: ReturnType<TracerProvider["getTracer"]>,
    private readonly span: Span,
  ) {}
  get traceId() {
    return this.span.spanContext().traceId;
  }
  get spanId() {
    return this.span.spanContext().spanId;
  }
  set(fields: SpanFields) {
    for (const key in fields) if (fields[key] !== undefined) this.span.setAttribute(key, fields[key]);
  }
  rename(name: string) {
    this.span.updateName(name);
  }
  event(name: string, fields?: SpanFields) {
    this.span.addEvent(name, fields && defined(fields));
  }
  fail(reason: string) {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  end() {
    this.span.end();
  }
  child(name: string, fields?: SpanFields): TraceSpan {
    const parent = trace.setSpan(context.active(), this.span);
    return new OtelSpan(this.tracer, this.tracer.startSpan(name, { attributes: fields && defined(fields) }, parent));
  }
  claim() {
    if (this.claimed) return false;
    this.claimed = true;
    return true;
  }
  traceparent() {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(context.active(), this.span), carrier, { set: (c, k, v) => (c[k] = v) });
    return carrier.traceparent!;
  }
}

function defined(fields: SpanFields): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key in fields) if (fields[key] !== undefined) out[key] = fields[key];
  return out;
}

/** A tracer exporting to `settings.endpoint` (the full `/v1/traces` URL). */
export function otelTracer(settings: TracingSettings): Tracer {
  const resource = resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName });
  const exporter = new OTLPTraceExporter({ url: settings.endpoint });
  const provider = new TracerProvider({ resource, sampler: samplerOf(settings), spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.exportDelayMs })] });
  const tracer = provider.getTracer("voxroute");
  return {
    root(name, traceparent, fields) {
      const parent = traceparent ? propagator.extract(context.active(), { traceparent }, headerGetter) : context.active();
      return new OtelSpan(tracer, tracer.startSpan(name, { attributes: defined(fields) }, parent));
    },
    shutdown: () => provider.shutdown(),
  };
}
