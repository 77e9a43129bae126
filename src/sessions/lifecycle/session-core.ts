import type { Binding } from "../../catalogue/types.ts";
import { ApiError, CLOSE, closeReason, ERRORS } from "../../errors.ts";
import type { Payer } from "../../ledger/meter-types.ts";
import type { Logger } from "../../log.ts";
import { admitSession, type Admission } from "../admission.ts";
import { IdleTimer } from "../idle-timer.ts";
import { type Attempt, type CandidateRun, tryCandidates } from "./candidates.ts";
import { CreditGate } from "./credit-gate.ts";
import { type Close, type EndingDeps, failureOf, type Outcome, recordEnding, type SessionEnding } from "./ending.ts";
import { requestBinding } from "../../request-context.ts";
import { sessionSpan, startSpan, withSpan } from "../../tracing/spans.ts";
import type { ProviderHealth } from "../../routing/health.ts";

// The part of a session every kind shares: admission, its candidates in order, the idle timeout,
// and ending exactly once. A kind supplies how it serves a candidate, how it tells its client of an
// error, what it stops when it ends, and how it bills (`ending`).

export interface CoreSetup {
  id: string;
  /** Auth, routing and billing admission; an `ApiError` from it ends the session with its close code. */
  admit: () => Promise<Admission>;
  /** See `IdleTimer`; 0 or absent for none. */
  idleTimeoutMs?: number;
}

export interface CoreKind {
  /** The log channel: `tts`, `stt`. */
  channel: string;
  /** What the idle timeout waited through, as the client hears it: "no frame from the client and nothing to send" (absent: the kind has none). */
  quiet?: string;
}

export abstract class SessionCore<Item, Setup extends CoreSetup, Deps extends EndingDeps & { health: ProviderHealth }> {
  protected state: "starting" | "ready" | "closed" = "starting";
  /** How the session ended, once it has. */
  private outcome: Outcome | undefined;
  protected admission: Admission | undefined;
  /** The binding serving the session. */
  protected binding: Binding | undefined;
  /** The binding a session that never connected is recorded against (else its first candidate). */
  protected tried: Binding | undefined;
  protected exhausted = false;
  /** The client said it has nothing more to send (or the balance ran out): its input after that is ignored. */
  protected closing = false;
  /** The client left, broke the frame contract or went quiet (rather than a provider failing). */
  protected endedByClient = false;
  protected readonly startedAt = new Date();
  protected readonly attempts: Attempt[] = [];
  /** The session's logger, once made (`log`). */
  private logger: Logger | undefined;
  /** What the session's log lines carry: the request's binding is read at the upgrade, while its scope is current. */
  private readonly logBindings: Record<string, unknown>;
  /** The span of the request or WebSocket session this serves (tracing on), read at the upgrade like the log's binding; or, for a part of a conversation, a child of its span. */
  private readonly traced: ReturnType<typeof sessionSpan>;
  protected readonly idle: IdleTimer;
  /** Client input in arrival order, admitted as the credit hold covers it. */
  protected readonly gate: CreditGate<Item>;
  readonly finished: Promise<void>;

  constructor(
    protected readonly setup: Setup,
    protected readonly deps: Deps,
    kind: CoreKind,
  ) {
    this.logBindings = { session: setup.id, channel: kind.channel, ...requestBinding() };
    this.traced = sessionSpan(`session.${kind.channel}`);
    const idleMs = setup.idleTimeoutMs ?? 0;
    this.idle = new IdleTimer(idleMs, () => {
      // Going quiet is the client's doing: billed as if it had left.
      this.endedByClient = true;
      void this.fail(new ApiError("idle_timeout", `${kind.quiet} for ${idleMs / 1000} s`));
    });
    this.gate = new CreditGate<Item>({
      usageWith: (item) => this.usageWith(item),
      // On the binding the session would be charged to (see `recordEnding`).
      cover: (units) => this.admission!.meter.cover(this.binding ?? this.tried ?? this.admission!.candidates[0], units),
      admit: (item, units) => this.admit(item, units),
      exhausted: () => this.exhaust(),
      failed: (err) => this.coverFailed(err),
    });
    // Deferred a tick: the kind's own fields are set only once this constructor has returned.
    this.finished = Promise.resolve().then(() => (this.traced ? withSpan(this.traced.span, () => this.run()) : this.run()));
  }

  /**
   * The session's logger, made when first used: a session that goes well logs only as it ends, so
   * a child logger (its bindings serialized and redacted) is not made on the open path of every session.
   */
  protected get log(): Logger {
    this.logger ??= this.deps.log.child(this.logBindings);
    return this.logger;
  }

  /** Who pays for the session, once admitted. */
  get payer(): Payer | undefined {
    return this.admission?.meter.payer;
  }

  protected get closed(): boolean {
    return this.state === "closed";
  }

  /** Client input, in arrival order, to the credit gate; false when the session takes no more. */
  protected receive(item: Item, closes: boolean): boolean {
    if (this.closed || this.closing) return false;
    this.idle.touch();
    if (closes) {
      this.closing = true;
      this.idle.stop();
    }
    this.gate.push(item);
    return true;
  }

  /** The server ends the session (its key was revoked, its tenant disabled): billed as when a provider fails. */
  end(err: ApiError): void {
    void this.fail(err);
  }

  /** The server is stopping and the grace period is over. */
  shutdown(): void {
    if (this.closed) return;
    this.sendError(new ApiError("service_unavailable", "the server is shutting down"));
    void this.finish("shutdown", { code: CLOSE.goingAway, reason: "server_shutdown" });
  }

  /** The session's usage once `item` is admitted, in the binding's unit; undefined when it costs nothing (see `CreditGateRules`). */
  protected abstract usageWith(item: Item): number | undefined;
  /** `item` is paid for: pass it on. */
  protected abstract admit(item: Item, units: number | undefined): void;
  /** The balance cannot pay for more: deliver what was admitted, then end with 4402 (`cutOff`). */
  protected abstract exhaust(): void;
  /** How the kind serves its candidates (see `CandidateRun`). */
  protected abstract candidateRun(): Omit<CandidateRun, "closed" | "fail">;
  /** Tells the client of an error before the session closes. */
  protected abstract sendError(error: ApiError): void;
  /** Lets go of the provider (and anything still opening). */
  protected abstract stopWork(): void;
  /** How the session is billed and recorded, by the kind's rules. */
  protected abstract ending(outcome: Outcome, close: Close | null): SessionEnding;
  /** The session was admitted: what the kind tells its meter about the request before any provider (TTS: its voice). */
  protected admitted(_admission: Admission): void {}
  /** Input admitted during admission goes on once it is known (a kind that reads its input by its provider's measure starts the gate once connected). */
  protected startInput(): void {
    this.gate.start();
  }
  /** What the kind readies once admitted, before its first candidate (a recording: held whole, then decoded); false: it is not to be served. */
  protected async prepare(): Promise<boolean> {
    return true;
  }
  /** The meter could not answer whether the hold grows (the ledger failed). */
  protected coverFailed(err: unknown): void {
    void this.fail(err);
  }

  protected async fail(err: unknown): Promise<void> {
    if (this.closed) return;
    const { error, close } = failureOf(err, this.log);
    this.sendError(error);
    await this.finish(this.endedByClient ? "client_left" : "failed", close);
  }

  /** The balance ran out and what was admitted has been delivered: end with 4402. */
  protected cutOff(message: string): Promise<void> {
    // A budget ends a session as the balance does (4402), under its own code.
    const spent = this.admission?.meter.budgetSpent;
    const code = spent ? "budget_exceeded" : "insufficient_balance";
    this.sendError(new ApiError(code, spent ?? message));
    return this.finish("cut_off", { code: ERRORS[code].close, reason: closeReason(code) });
  }

  /**
   * The request goes on in another session (a recording this kind cannot stream goes to the file
   * APIs): this one ends without a record, its admission and hold handed on to the next, which settles.
   */
  protected handOver(): void {
    this.state = "closed";
    this.idle.stop();
    this.gate.stop();
    this.stopWork();
  }

  /** Ends the session once: stops the provider, settles usage, then sends the last words and closes (`close` null: the client is gone). */
  protected async finish(outcome: Outcome, close: Close | null, lastWords?: () => void): Promise<void> {
    if (this.closed) return;
    this.state = "closed";
    this.outcome = outcome;
    this.idle.stop();
    this.gate.stop();
    this.stopWork();
    const record = { admission: this.admission, binding: this.binding, tried: this.tried, startedAt: this.startedAt, attempts: this.attempts, traced: this.traced };
    const ending = this.ending(outcome, close);
    // The session's own logger only when its closing line is written (it costs its bindings serialized and redacted).
    const deps = { ...this.deps, log: this.deps.log.isLevelEnabled("info") ? this.log : this.deps.log };
    // A client's close arrives in a socket callback, outside the request's scope: the settle's span is put back under the session's.
    if (this.traced) await withSpan(this.traced.span, () => recordEnding(record, ending, deps, close, lastWords));
    else await recordEnding(record, ending, deps, close, lastWords);
  }

  private async run(): Promise<void> {
    const admitting = startSpan("admission");
    const admit = () =>
      admitSession(
        this.setup.admit,
        (err) => this.fail(err),
        () => this.outcome,
        this.startedAt,
      );
    this.admission = await (admitting ? withSpan(admitting, admit) : admit());
    if (admitting) {
      admitting.set({ "voxroute.admitted": this.admission !== undefined, "voxroute.candidates": this.admission?.candidates.length });
      admitting.end();
    }
    if (!this.admission) return;
    this.admitted(this.admission);
    // Input sent while the session was being admitted waits in the gate: it goes on as paid for.
    this.startInput();
    try {
      if (!(await this.prepare()) || this.closed) return;
    } catch (err) {
      return this.fail(err);
    }
    const run: CandidateRun = { ...this.candidateRun(), closed: () => this.closed, fail: (err) => this.fail(err) };
    const session = this;
    const observers = {
      metrics: this.deps.metrics,
      health: this.deps.health,
      // Read only when an attempt fails.
      get log() {
        return session.log;
      },
    };
    await tryCandidates(this.admission.candidates, run, this.attempts, observers);
  }
}
