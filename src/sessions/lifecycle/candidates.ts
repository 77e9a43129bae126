import type { Binding } from "../../catalogue/types.ts";
import { sessionFailure, ProviderError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { Metrics } from "../../metrics.ts";
import type { ProviderHealth } from "../../routing/health.ts";
import { withTimeout } from "../../util/timeout.ts";
import { startSpan, type TraceSpan, tracingOn, withSpan } from "../../tracing/spans.ts";

// How every session kind goes through its candidates: each is opened within the connect timeout,
// then served. A retryable provider failure moves on to the next candidate while the kind says
// the client has had nothing it would get twice (`canMoveOn`); any other failure ends the session.
// Candidates whose provider is known to be failing are skipped (routing/health.ts).

/** A provider attempt that failed, as the activity record lists it. */
export interface Attempt {
  provider: string;
  reason: string;
}

export interface CandidateRun {
  /** Opens the candidate (use `openWithin`); the session is ready to serve it when this resolves. */
  connect(binding: Binding): Promise<void>;
  /**
   * Serves the connected candidate until the session is over (or hands it to callbacks and returns).
   * `served` is called once the candidate has proved it serves (TTS: its first audio; a stream of
   * audio in: accepted; a file: transcribed): its health counts on it. One that returns without
   * calling it leaves its health as it was. `failed` tells a failure the kind does not throw (a relay
   * whose upstream dies after it was accepted ends the session itself).
   */
  serve(binding: Binding, served: () => void, failed: (err: unknown) => void): Promise<void>;
  /** The kind's rule for moving on after a retryable failure (TTS: always, also after audio went out). */
  canMoveOn(): boolean;
  /** Drops the failed candidate's state before the next is opened (TTS queues for replay the text whose audio had not ended). */
  moveOn(): void;
  /** A candidate failed (the session may tell its client). */
  attemptFailed?(binding: Binding, reason: string): void;
  closed(): boolean;
  fail(err: unknown): Promise<void>;
}

/**
 * Counts each failed attempt by provider and the code its client would hear, and each move to the
 * next candidate. A candidate whose circuit is open is skipped (`ProviderHealth`); each attempt tells
 * the health how it went, whenever it fails (while connecting, before or after output). With every
 * candidate skipped, the session fails at once: 503 `provider_unavailable`.
 */
export async function tryCandidates(candidates: Binding[], run: CandidateRun, attempts: Attempt[], observers: { log: Logger; metrics: Metrics; health: ProviderHealth }): Promise<void> {
  const { metrics, health } = observers; // the log is read only when an attempt fails: a session makes its logger when first used
  const routing = tracingOn() ? startSpan("routing", { "voxroute.candidates": candidates.map(named).join(",") }) : undefined;
  let failure: unknown;
  try {
    for (let i = 0; i < candidates.length && !run.closed(); i++) {
      const binding = candidates[i];
      const verdict = health.attempt(binding);
      if (!verdict) {
        routing?.event("skipped", { "voxroute.provider": binding.provider.id, reason: "circuit_open" });
        continue;
      }
      const attempt = routing?.child("provider.attempt", { "voxroute.provider": binding.provider.id, "voxroute.model": binding.canonical, "voxroute.attempt": i + 1 });
      routing?.set({ "voxroute.chosen": named(binding) });
      try {
        await (attempt ? withSpan(attempt, () => run.connect(binding)) : run.connect(binding));
        attempt?.event("connected");
        if (run.closed()) return verdict.released();
        await (attempt ? withSpan(attempt, () => run.serve(binding, firstOutput(attempt, verdict.served), verdict.failed)) : run.serve(binding, verdict.served, verdict.failed));
        attempt?.event("end");
        return verdict.released();
      } catch (err) {
        if (run.closed()) return verdict.released();
        verdict.failed(err);
        const reason = (err as Error).message;
        const code = sessionFailure(err).code;
        attempt?.fail(code);
        attempt?.set({ "error.type": code });
        attempts.push({ provider: binding.provider.id, reason });
        observers.log.warn({ provider: binding.provider.id, reason }, "provider attempt failed");
        metrics.upstreamErrors.inc({ provider: binding.provider.id, code });
        run.attemptFailed?.(binding, reason);
        if (err instanceof ProviderError && err.retryable && run.canMoveOn() && candidates.slice(i + 1).some((b) => health.usable(b))) {
          metrics.fallbacks.inc({ provider: binding.provider.id, reason: code });
          routing?.event("failover", { "voxroute.provider": binding.provider.id, reason: code });
          run.moveOn();
          failure = err;
          continue;
        }
        return run.fail(err);
      } finally {
        attempt?.end();
      }
    }
    if (!run.closed()) return run.fail(failure ?? health.unavailable(candidates));
  } finally {
    routing?.end();
  }
}

const named = (binding: Binding) => `${binding.provider.id}/${binding.canonical}`;

/** `served`, also marking the attempt's first output on its span. */
function firstOutput(attempt: TraceSpan, served: () => void): () => void {
  return () => {
    attempt.event("first_output");
    served();
  };
}

/**
 * A provider's opening, bounded by the connect timeout; what it hands over too late is released.
 * An embedded engine's is not: a busy engine is not a down one (docs/routing.md), and a worker that
 * dies fails its sessions at once.
 */
export function openWithin<T>(opening: Promise<T>, ms: number, provider: { readonly id: string; readonly embedded?: boolean }, release: (late: T) => void): Promise<T> {
  if (provider.embedded) return opening;
  return withTimeout(opening, ms, `${provider.id} did not accept the session in time`, release);
}
