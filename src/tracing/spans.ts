import { AsyncLocalStorage } from "node:async_hooks";

// The router's spans, as the rest of the code sees them. With tracing off (no OTLP endpoint set)
// no tracer is installed: every helper here returns undefined or calls straight through, and the
// OpenTelemetry SDK is never loaded (tracing/otel.ts is imported only when tracing is on).

export type SpanValue = string | number | boolean | undefined;
export type SpanFields = Record<string, SpanValue>;

/** One span: what the router notes on it, and its W3C ids for logs and for the next hop. */
export interface TraceSpan {
  readonly traceId: string;
  readonly spanId: string;
  set(fields: SpanFields): void;
  rename(name: string): void;
  event(name: string, fields?: SpanFields): void;
  /** Marks the span failed (status ERROR) with `reason` — a code or a message, never a secret. */
  fail(reason: string): void;
  end(): void;
  child(name: string, fields?: SpanFields): TraceSpan;
  /** The `traceparent` header that makes the next hop this span's child. */
  traceparent(): string;
  /**
   * True for the first caller only: the one that ends a request's root span and names how it went
   * (the session it upgraded to, or a conversation); the sessions a conversation opens get spans of their own.
   */
  claim(): boolean;
}

export interface Tracer {
  /** A root span: a child of the client's `traceparent` when it sent a valid one. */
  root(name: string, traceparent: string | null, fields: SpanFields): TraceSpan;
  shutdown(): Promise<void>;
}

let tracer: Tracer | undefined;
const active = new AsyncLocalStorage<TraceSpan>();

export function installTracer(installed: Tracer | undefined): void {
  tracer = installed;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** A root span made the active span for the rest of the current async work (a request's). */
export function enterRoot(name: string, traceparent: string | null, fields: SpanFields): TraceSpan | undefined {
  if (!tracer) return undefined;
  const span = tracer.root(name, traceparent, fields);
  active.enterWith(span);
  return span;
}

/** The span the current work belongs to, if tracing is on. */
export function activeSpan(): TraceSpan | undefined {
  return tracer && active.getStore();
}

/** A child of the active span (none with tracing off, or outside any span). */
export function startSpan(name: string, fields?: SpanFields): TraceSpan | undefined {
  return tracer && active.getStore()?.child(name, fields);
}

/** A session's span: the active root when it is the first to claim it, else a `session` child of the active span. */
export function sessionSpan(name: string): { span: TraceSpan; child: boolean } | undefined {
  const active = activeSpan();
  if (!active) return undefined;
  return active.claim() ? { span: active, child: false } : { span: active.child(name), child: true };
}

/** Runs `work` with `span` as the active span (straight through when there is none). */
export function withSpan<T>(span: TraceSpan | undefined, work: () => T): T {
  return span ? active.run(span, work) : work();
}

/** `headers` with the active span's `traceparent` added (the same object when there is none). */
export function withTraceparent<H extends Record<string, string>>(headers: H): H {
  const span = activeSpan();
  return span ? { ...headers, traceparent: span.traceparent() } : headers;
}

/**
 * `work` in a child span of the active span named `name`, ended when it settles (failed with the
 * error's code when it throws); `about` adds what its result tells. Straight through with tracing off.
 */
export async function inSpan<T>(name: string, work: () => Promise<T>, about?: (result: T) => SpanFields): Promise<T> {
  const span = startSpan(name);
  if (!span) return work();
  try {
    const result = await active.run(span, work);
    if (about) span.set(about(result));
    return result;
  } catch (err) {
    span.fail((err as { code?: string }).code ?? (err as Error).name);
    throw err;
  } finally {
    span.end();
  }
}
