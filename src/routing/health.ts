import type { Binding } from "../catalogue/types.ts";
import { ApiError, CannotContinue, ProviderError, ProviderOverloaded } from "../errors.ts";
import type { Logger } from "../log.ts";

// Provider health, per binding (provider × model) and per router instance (docs/routing.md#provider-health):
// consecutive provider failures open a binding's circuit for a cooldown that doubles while it keeps
// failing; an open binding is skipped by every new session; once the cooldown is over one session at a
// time probes it; a success closes it. Nothing runs on a timer: the state is read when asked.

export interface HealthConfig {
  /** Consecutive provider failures that open a binding's circuit; 0: it never opens (failures are still shown). */
  failureThreshold: number;
  /** The first cooldown; each opening after it without a success in between doubles it, up to `cooldownMaxMs`. */
  cooldownMs: number;
  cooldownMaxMs: number;
}

/** `up`: serving, no failure since its last success; `degraded`: serving after failures, or its cooldown over and a probe due or under way; `down`: skipped until `retry_at`. */
export type HealthStatus = "up" | "degraded" | "down";

/** A binding's health as `GET /v1/providers` shows it. */
export interface HealthView {
  status: HealthStatus;
  consecutive_failures: number;
  /** While down: when its cooldown ends and a session may probe it. */
  retry_at: string | null;
  /** While its circuit is not closed (down, or half-open): the length of its latest cooldown. */
  cooldown_ms: number | null;
  last_failure: { at: string; reason: string } | null;
}

/** One session's attempt on a binding: the session tells how it went, once (a failure may follow `served`: a mid-session failure). */
export interface HealthAttempt {
  /** The binding proved it serves (see `CandidateRun.serve`): its circuit closes. */
  served(): void;
  /** The attempt failed, also after it served: counted when the failure is the provider's (a retryable ProviderError other than capacity). */
  failed(err: unknown): void;
  /** The attempt ended with no verdict (the session ended first): a probe's turn passes to the next session. */
  released(): void;
}

interface BindingState {
  failures: number;
  /** Openings since the last success: the cooldown grows with them. */
  opens: number;
  /** When the open circuit's cooldown ends; 0 while closed. */
  openUntil: number;
  cooldownMs: number;
  /** A session is probing the half-open circuit. */
  probing: boolean;
  /** Successes so far: a served attempt that fails later undoes its own reset only when none came after it. */
  successes: number;
  lastFailure?: { at: number; reason: string };
}

/** Whether a failure is the provider's: retryable, not a provider at capacity, not one whose audio cannot continue another's stream (a client's mistake, a full queue or a format says nothing of its health). */
export function countsAgainstProvider(err: unknown): boolean {
  return err instanceof ProviderError && err.retryable && !(err instanceof ProviderOverloaded) && !(err instanceof CannotContinue);
}

const keyOf = (b: Binding) => `${b.capability}:${b.provider.id}:${b.id}`;

export class ProviderHealth {
  private readonly states = new Map<string, BindingState>();

  constructor(
    private readonly config: HealthConfig,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  status(binding: Binding): HealthStatus {
    const s = this.states.get(keyOf(binding));
    if (!s) return "up";
    if (s.openUntil > this.now()) return "down";
    return s.openUntil !== 0 || s.failures > 0 ? "degraded" : "up";
  }

  view(binding: Binding): HealthView {
    const s = this.states.get(keyOf(binding));
    const status = this.status(binding);
    const down = status === "down" && s;
    return {
      status,
      consecutive_failures: s?.failures ?? 0,
      retry_at: down ? new Date(s.openUntil).toISOString() : null,
      cooldown_ms: s && s.openUntil !== 0 ? s.cooldownMs : null,
      last_failure: s?.lastFailure ? { at: new Date(s.lastFailure.at).toISOString(), reason: s.lastFailure.reason } : null,
    };
  }

  /**
   * A new session's attempt on `binding`, or undefined when the session must skip it: its circuit
   * is open, or its cooldown is over and another session is probing it.
   */
  attempt(binding: Binding): HealthAttempt | undefined {
    const s = this.states.get(keyOf(binding));
    if (!s || s.openUntil === 0) return this.attemptOn(binding, false);
    if (s.openUntil > this.now() || s.probing) return undefined;
    s.probing = true;
    this.log.info({ provider: binding.provider.id, model: binding.canonical, status: "degraded", consecutive_failures: s.failures }, "provider probed after its cooldown");
    return this.attemptOn(binding, true);
  }

  /** Whether a new session would try `binding` now (without claiming a probe). */
  usable(binding: Binding): boolean {
    const s = this.states.get(keyOf(binding));
    return !s || s.openUntil === 0 || (s.openUntil <= this.now() && !s.probing);
  }

  /** The refusal of a session whose every candidate was skipped: 503 `provider_unavailable`, `retry_after` when the first cooldown ends. */
  unavailable(candidates: Binding[]): ApiError {
    const now = this.now();
    const ends = candidates.map((b) => this.states.get(keyOf(b))?.openUntil ?? 0);
    const soonest = Math.max(0, Math.min(...ends) - now);
    const ids = [...new Set(candidates.map((b) => b.provider.id))].join(", ");
    return new ApiError("provider_unavailable", `every provider of the request is failing (${ids}): its circuit is open; try again later`, { retry_after: Math.max(1, Math.ceil(soonest / 1000)) });
  }

  private state(binding: Binding): BindingState {
    const key = keyOf(binding);
    let s = this.states.get(key);
    if (!s) this.states.set(key, (s = { failures: 0, opens: 0, openUntil: 0, cooldownMs: 0, probing: false, successes: 0 }));
    return s;
  }

  private attemptOn(binding: Binding, probe: boolean): HealthAttempt {
    // A served attempt may still fail later (mid-session): it is then no success, and its failure
    // counts on from the count its serving had reset (a provider that dies in every session opens).
    let stage: "open" | "served" | "over" = "open";
    let prior: Pick<BindingState, "failures" | "opens" | "successes"> | undefined;
    const settle = (next: "served" | "over", verdict: (asProbe: boolean) => void) => {
      if (stage === "over" || stage === next) return;
      const before = this.status(binding);
      const s = this.state(binding);
      const asProbe = probe && stage === "open";
      if (asProbe) s.probing = false;
      stage = next;
      verdict(asProbe);
      this.tell(binding, before, s);
    };
    return {
      served: () =>
        settle("served", () => {
          const s = this.state(binding);
          prior = { failures: s.failures, opens: s.opens, successes: s.successes + 1 };
          Object.assign(s, { failures: 0, opens: 0, openUntil: 0, cooldownMs: 0, successes: prior.successes });
        }),
      failed: (err) =>
        settle("over", (asProbe) => {
          if (!countsAgainstProvider(err)) return;
          const s = this.state(binding);
          if (prior?.successes === s.successes) Object.assign(s, { failures: Math.max(s.failures, prior.failures), opens: Math.max(s.opens, prior.opens) });
          this.failure(binding, asProbe, (err as Error).message);
        }),
      released: () => settle("over", () => {}),
    };
  }

  private failure(binding: Binding, probe: boolean, reason: string): void {
    const s = this.state(binding);
    const now = this.now();
    s.failures++;
    s.lastFailure = { at: now, reason };
    const threshold = this.config.failureThreshold;
    // Already open: failures of sessions that began before it opened add nothing to its cooldown.
    if (threshold === 0 || s.openUntil > now) return;
    // Half-open, only the probe's failure reopens it.
    const opens = s.openUntil !== 0 ? probe : s.failures >= threshold;
    if (!opens) return;
    s.opens++;
    s.cooldownMs = Math.min(this.config.cooldownMs * 2 ** (s.opens - 1), this.config.cooldownMaxMs);
    s.openUntil = now + s.cooldownMs;
  }

  /** One log line per change of status: a warning when it goes down, information otherwise. */
  private tell(binding: Binding, before: HealthStatus, s: BindingState): void {
    const after = this.status(binding);
    if (after === before) return;
    const fields = { provider: binding.provider.id, model: binding.canonical, status: after, previous: before, consecutive_failures: s.failures };
    if (after === "down") {
      this.log.warn({ ...fields, cooldown_ms: s.cooldownMs, retry_at: new Date(s.openUntil).toISOString(), reason: s.lastFailure?.reason }, "provider down: skipped until its cooldown ends");
    } else {
      this.log.info(fields, after === "up" ? "provider up" : "provider degraded");
    }
  }
}
