import type { Binding } from "../../catalogue/types.ts";
import { ApiError, closeReason, sessionFailure, ProviderError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { Metrics } from "../../metrics.ts";
import type { Outcome } from "../../ledger/activity.ts";
import type { Admission } from "../admission.ts";
import type { Attempt } from "./candidates.ts";
import type { TraceSpan } from "../../tracing/spans.ts";

// How every session kind ends: one outcome vocabulary for logs, the requests metric and the
// activity record, usage settled exactly once before the client hears the end.

/**
 * The outcomes (the ledger's vocabulary, which its activity records keep):
 * - `completed`: the session ran to its end (the client closed it and the provider finished).
 * - `cut_off`: the balance ran out; what was admitted was delivered, then 4402.
 * - `client_left`: the client went away, broke the frame contract or went quiet past the idle timeout.
 * - `failed`: a provider failed, or the server ended the session (a revoked key, a disabled tenant).
 * - `shutdown`: the server stopped and its grace period ran out.
 */
export type { Outcome };

/** How a session ended, by its kind's rules. */
export interface SessionEnding {
  outcome: Outcome;
  /** Usage billed, in the binding's unit. */
  billed: number;
  /**
   * The activity record's status, by the kind's rule: whether the client got what it paid for as
   * it asked (`completed`) or not (`failed`); see docs/architecture.md for each kind's table.
   */
  status: "completed" | "failed";
  latencyMs: number;
  /** What the log line adds (sizes, codes). */
  details: Record<string, unknown>;
  /** TTS: characters billed that the TTS cache played, and their price factor. */
  cached?: { units: number; factor: string };
}

/** What every session kind knows of itself when it ends. */
export interface SessionRecord {
  admission: Admission | undefined;
  /** The binding that served the session; absent when none did. */
  binding: Binding | undefined;
  /** The binding to charge when none served it (the one tried last); else the first candidate is. */
  tried?: Binding;
  startedAt: Date;
  attempts: Attempt[];
  /** The span of the request or WebSocket session, or the session's own within a conversation (tracing on). */
  traced?: { span: TraceSpan; child: boolean };
}

export interface EndingDeps {
  log: Logger;
  metrics: Metrics;
  surface: string;
  /** How the client is served: a WebSocket (the default) or a streamed HTTP body. */
  transport?: "ws" | "http";
  port: { close(code: number, reason: string): void; together?(fn: () => void): void };
}

/**
 * Settles usage (once: the meter refuses a second settle), records the session's end, then lets
 * the session say its last words and closes (`close` null: the client is gone). An admitted
 * session is charged to the binding it used (or tried last), else to its first candidate: every
 * admitted request leaves one activity record, also one that never reached a provider.
 */
export async function recordEnding(session: SessionRecord, end: SessionEnding, deps: EndingDeps, close: Close | null, lastWords?: () => void): Promise<void> {
  const { admission, startedAt, attempts } = session;
  const charged = admission && (session.binding ?? session.tried ?? admission.candidates[0]);
  // A settle that fails is logged by the meter with everything needed to bill it by hand.
  const settle = { binding: charged!, status: end.status, outcome: end.outcome, units: end.billed, startedAt, latencyMs: end.latencyMs, attempts, ...(end.cached ? { cached: end.cached } : {}) };
  const credits = admission ? (await admission.meter.settle(settle).catch(() => undefined))?.credits : undefined;
  const provider = session.binding?.provider.id;
  const payer = admission?.meter.payer;
  const durationMs = Date.now() - startedAt.getTime();
  const transport = deps.transport ?? "ws";
  if (deps.log.isLevelEnabled("info"))
    deps.log.info(
      {
        outcome: end.outcome,
        surface: deps.surface,
        transport,
        tenant: payer?.tenantId,
        key_prefix: payer?.keyPrefix,
        provider,
        model: charged?.canonical,
        billed: end.billed,
        credits,
        code: close?.code,
        latency_ms: Math.round(end.latencyMs),
        duration_ms: durationMs,
        ...end.details,
      },
      "session closed",
    );
  if (session.traced) endSpan(session.traced, transport, { outcome: end.outcome, tenant: payer?.tenantId, keyPrefix: payer?.keyPrefix, provider, model: charged?.canonical, close });
  deps.metrics.requests.inc({ surface: deps.surface, provider: provider ?? "none", status: end.outcome });
  deps.metrics.sessionDuration.observe({ surface: deps.surface, transport, outcome: end.outcome }, durationMs / 1000);
  if (deps.port.together) deps.port.together(() => sayLast(deps, close, lastWords));
  else sayLast(deps, close, lastWords);
}

/** Notes how the session went on its span, and ends it: its own, or a WebSocket session's root (a streamed HTTP answer's root ends with its request line). */
function endSpan(
  { span, child }: { span: TraceSpan; child: boolean },
  transport: "ws" | "http",
  ended: { outcome: Outcome; tenant?: string; keyPrefix?: string; provider?: string; model?: string; close: Close | null },
): void {
  span.set({ "voxroute.outcome": ended.outcome, "voxroute.tenant_id": ended.tenant, "voxroute.key_prefix": ended.keyPrefix, "voxroute.provider": ended.provider, "voxroute.model": ended.model });
  if (transport === "http" && !child) return;
  span.set({ "websocket.close_code": ended.close?.code, "websocket.close_reason": ended.close?.reason });
  if (ended.outcome === "failed") span.fail(ended.close?.reason ?? "failed");
  span.end();
}

function sayLast(deps: EndingDeps, close: Close | null, lastWords: (() => void) | undefined): void {
  lastWords?.();
  if (close) deps.port.close(close.code, close.reason);
}

export interface Close {
  code: number;
  reason: string;
}

/** A session's failure as its client hears it (the error, and the close it calls for), logged once. */
export function failureOf(err: unknown, log: Logger): { error: ApiError; close: Close } {
  const error = sessionFailure(err);
  if (!(err instanceof ApiError || err instanceof ProviderError)) log.error({ err }, "session failed");
  else log.info({ code: error.code, reason: error.message }, "session ended with an error");
  return { error, close: { code: error.closeCode, reason: closeReason(error.code) } };
}
