import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import { currentRequest, type RequestRecord } from "./request-context.ts";
import type { TraceSpan } from "./tracing/spans.ts";

// One JSON line per HTTP request (docs/operations.md#logs), with what the request turned out to
// be: whose key, which provider and model, what it cost, how it was answered and how long it took.
// A streamed answer's line waits for the session it streams; a WebSocket session writes its own
// line when it ends (sessions/lifecycle/ending.ts).

const SURFACES: [prefix: string, surface: string][] = [
  ["/oai", "oai"],
  ["/el", "el"],
  ["/v1", "native"],
  ["/account", "account"],
];

/** The surface a path belongs to, as logs and metrics name it. */
export function surfaceOf(path: string): string {
  for (const [prefix, surface] of SURFACES) if (path === prefix || path.startsWith(`${prefix}/`)) return surface;
  return "ops";
}

/** Elysia's status for a handshake it upgraded (its handler's value is not the answer). */
const UPGRADED = 200;
const SWITCHING_PROTOCOLS = 101;

/**
 * The request being served was answered with `status` by `route` (Elysia's pattern; undefined when
 * no route matched): its line and its duration are written once, after the work its answer
 * carries on with (not an upgrade's session, which writes its own line).
 */
export function requestAnswered(deps: { log: Logger; metrics: Metrics }, route: string | undefined, status: number): void {
  const record = currentRequest();
  if (!record || record.answered) return;
  record.answered = true;
  const latencyMs = performance.now() - record.startedAt;
  // An upgrade's span is the session's: it ends with the session (sessions/lifecycle/ending.ts).
  if (record.upgrade && status === UPGRADED) return write(deps, { ...record, pending: [], span: undefined }, route, SWITCHING_PROTOCOLS, latencyMs, record.span);
  if (!record.pending.length) return write(deps, record, route, status, latencyMs);
  void Promise.allSettled(record.pending).then(() => write(deps, record, route, status, latencyMs));
}

function write({ log, metrics }: { log: Logger; metrics: Metrics }, record: RequestRecord, route: string | undefined, status: number, latencyMs: number, sessionSpan = record.span): void {
  const durationMs = performance.now() - record.startedAt;
  const surface = surfaceOf(record.path);
  if (record.span) endRequestSpan(record, route, surface, status);
  else if (sessionSpan)
    renamed(sessionSpan, `WebSocket ${route ?? record.path}`).set({ "http.route": route, "voxroute.surface": surface, "voxroute.tenant_id": record.tenantId, "voxroute.key_prefix": record.keyPrefix });
  log.info(
    {
      request_id: record.requestId,
      ...(sessionSpan && { trace_id: sessionSpan.traceId, span_id: sessionSpan.spanId }),
      method: record.method,
      route: route ?? record.path,
      surface,
      status,
      tenant: record.tenantId,
      key_prefix: record.keyPrefix,
      provider: record.provider,
      model: record.model,
      credits: record.credits,
      error: record.error,
      latency_ms: Math.round(latencyMs * 10) / 10,
      ...(record.pending.length ? { duration_ms: Math.round(durationMs) } : {}),
    },
    "request",
  );
  metrics.httpDuration.observe({ route: route ?? "unmatched", method: record.method, status }, durationMs / 1000);
  if (record.error && status >= 400 && status < 500) metrics.refusals.inc({ surface, code: record.error });
}

/** The request's root span, named by its route, with whom it served and how it was answered. */
function endRequestSpan(record: RequestRecord, route: string | undefined, surface: string, status: number): void {
  const span = record.span!;
  span.rename(route ? `${record.method} ${route}` : record.method);
  span.set({
    "http.route": route,
    "http.response.status_code": status,
    "voxroute.surface": surface,
    "voxroute.tenant_id": record.tenantId,
    "voxroute.key_prefix": record.keyPrefix,
    "voxroute.provider": record.provider,
    "voxroute.model": record.model,
    "error.type": record.error,
  });
  if (status >= 500) span.fail(record.error ?? String(status));
  span.end();
}

function renamed(span: TraceSpan, name: string): TraceSpan {
  span.rename(name);
  return span;
}
