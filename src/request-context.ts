import { AsyncLocalStorage } from "node:async_hooks";
import { activeSpan, enterRoot, type TraceSpan, tracingOn } from "./tracing/spans.ts";

// The request an answer, a log line or an error body belongs to. app.ts enters a scope per request
// (onRequest); everything that runs on from its handler (sessions started by an HTTP route, the
// error handler) sees its record. Logs read its id through the logger's mixin (log.ts); what the
// request turned out to be (whose key, which provider, what it cost) is noted on the record as it
// is learnt, for the request's one log line (request-log.ts).

export interface RequestRecord {
  requestId: string;
  method: string;
  path: string;
  /** A WebSocket handshake: answered 101, its session writes its own line when it ends. */
  upgrade: boolean;
  /** `performance.now()` when it arrived. */
  startedAt: number;
  /** The code of the error it was answered with, if any. */
  error?: string;
  tenantId?: string;
  keyPrefix?: string;
  provider?: string;
  model?: string;
  credits?: number;
  /** Work the answer carries on after its head was sent (a streamed session's end): the line waits for it. */
  pending: Promise<unknown>[];
  /** Its line is written (or waits for `pending`): a request is answered once. */
  answered?: boolean;
  /** Its root span, with tracing on: a WebSocket session's lasts until the session ends. */
  span?: TraceSpan;
}

const scope = new AsyncLocalStorage<RequestRecord>();

/** Printable ASCII, at most 200 characters: a client's id is echoed only if it is that. */
const ACCEPTABLE = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

/** The client's `x-request-id` when it is a sane one, else a new `req_<uuid>`. */
export function requestIdFor(request: Request): string {
  const sent = request.headers.get("x-request-id")?.trim();
  return sent && ACCEPTABLE.test(sent) ? sent : `req_${crypto.randomUUID()}`;
}

/** Makes a new record of `request`, as `requestId`, the current request for the rest of its work. */
export function enterRequest(requestId: string, request: Request): RequestRecord {
  const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
  const path = new URL(request.url).pathname;
  const record: RequestRecord = { requestId, method: request.method, path, upgrade, startedAt: performance.now(), pending: [] };
  // A client's `traceparent` makes this request a child of its span (tracing on only).
  // Named by its route once answered (request-log.ts); a socket closed before that keeps its path.
  if (tracingOn())
    record.span = enterRoot(upgrade ? `WebSocket ${path}` : request.method, request.headers.get("traceparent"), {
      "http.request.method": request.method,
      "url.path": path,
      "voxroute.request_id": requestId,
    });
  scope.enterWith(record);
  return record;
}

/** The request being served, if any. */
export function currentRequest(): RequestRecord | undefined {
  return scope.getStore();
}

/** Adds what was learnt about the request being served (nothing outside a request). */
export function noteRequest(fields: Partial<Omit<RequestRecord, "requestId" | "method" | "path" | "upgrade" | "startedAt" | "pending" | "answered" | "span">>): void {
  const record = scope.getStore();
  if (record) Object.assign(record, fields);
}

/** The line of the request being served waits for this work to end. */
export function awaitInRequest(work: Promise<unknown>): void {
  scope.getStore()?.pending.push(work);
}

/**
 * `{request_id, route}` of the request being served, for the logger of work that outlives it (a
 * WebSocket session's lines are written from socket callbacks, outside the request's scope); with
 * tracing on, also the `trace_id` and `span_id` of the span the work is in.
 */
export function requestBinding(): { request_id?: string; route?: string; trace_id?: string; span_id?: string } {
  const record = scope.getStore();
  if (!record) return {};
  const span = record.span && (activeSpan() ?? record.span);
  return span ? { request_id: record.requestId, route: record.path, trace_id: span.traceId, span_id: span.spanId } : { request_id: record.requestId, route: record.path };
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}
