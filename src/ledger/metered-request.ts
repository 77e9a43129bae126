import type { Binding } from "../catalogue/types.ts";
import type { Logger } from "../log.ts";
import { currentRequest } from "../request-context.ts";
import type { Outcome } from "./activity.ts";
import { newCheckpoint, retarget, target, type Checkpoint } from "./checkpoint.ts";
import { type CachedUnits, ceilCredits } from "./cost.ts";
import { HeldCredits } from "./held-credits.ts";
import type { ActivityRow, Ledger } from "./ledger.ts";
import { ServedParts } from "./parts.ts";
import { inSettleSpan, type RequestEnd, usageRecord, writeUsage } from "./settle-usage.ts";
import { total, type Allocation } from "./sources.ts";
import type { SpendCap } from "./spend-caps.ts";
import type { MeterOptions, Payer, Settled } from "./meter-types.ts";
import { startSpan, tracingOn } from "../tracing/spans.ts";
import { UnderWay } from "../util/under-way.ts";

// One request's credits: held ahead of use, the usage it delivered noted (the checkpoint a crash
// is billed from), settled once. A hold is taken before the credits are used, with a database
// round trip, or, where the funds view allows it (Ledger.reserveBehind), counted at once and
// written behind while the upstream works (after up to DEFER_MS; a settle before then takes it
// into its own batch). Either way the settle runs after it.

/** How many times its first stretch an account must be able to pay before a session reserves it ahead. */
const RICH_ACCOUNT = 100;

export class MeteredRequest {
  /** Credits held so far, within the budgets over the payer. */
  private readonly held: HeldCredits;
  private extending: Promise<boolean> | undefined;
  /** Holds written behind, still under way: counted in `held` already; the ledger runs the settle after them. */
  private readonly behind = new UnderWay();
  private settled = false;
  /** A settle that could not be recorded released what the request held. */
  private released = false;
  /** What the hold row says about the request; made with the first reserve. */
  private checkpoint: Checkpoint | undefined;
  private readonly startedAt = Date.now();
  /** The HTTP request (or WebSocket upgrade) this usage belongs to: its log line names the provider and the credits. */
  private readonly request = currentRequest();
  /** TTS: the voice the request named, recorded with its activity (the voice catalogue's metrics). */
  private voice: string | undefined;
  /** The bindings that served the request before the current one (a failover mid-session). */
  private readonly parts = new ServedParts();

  constructor(
    readonly id: string,
    readonly payer: Payer,
    private readonly surface: string,
    private readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly options: MeterOptions,
    private readonly settledWith: (settled: Settled) => void,
    /** The budgets over the payer: what the hold may grow by is within their room. */
    cap?: SpendCap,
  ) {
    this.held = new HeldCredits(cap);
  }

  /** Why a cover was refused by a budget, not the balance: the session ends `budget_exceeded`. */
  get budgetSpent(): string | undefined {
    return this.held.refusedBy;
  }

  /** The voice a TTS request named: its activity record (and a crash's recovered one) carries it. */
  forVoice(voice: string | undefined): void {
    this.voice = voice;
    this.parts.voice = voice;
    if (this.checkpoint) this.checkpoint.voice = voice;
  }

  /**
   * `binding` served the request up to `upTo` units (its running total) and the next binding takes
   * over (a failover mid-session), speaking `nextVoice` (TTS). Counts given afterwards (`cover`,
   * `delivered`, `settle`) stay running totals: the units past `upTo` are the next binding's.
   * `cached` (TTS): the characters the cache played so far, a running total as `RequestEnd.cached`.
   */
  partServed(binding: Binding, upTo: number, nextVoice?: string, cached?: CachedUnits): void {
    if (this.settled) return;
    this.parts.close(binding, upTo, nextVoice, cached);
    if (this.checkpoint) {
      this.checkpoint.parts = this.parts.checkpointParts(target);
      this.checkpoint.servingVoice = this.parts.voice;
      this.checkpoint.units = upTo; // until the next binding delivers more
      if (this.checkpoint.cached) this.checkpoint.cached = undefined; // the next binding's part has had none played yet
      this.ledger.holds.note(this.id);
    }
  }

  /** Credits that cover `units` (the running total; past the served parts on `binding`) with the carry (< 1 credit) included. */
  private needed(binding: Binding, units: number): number {
    return ceilCredits(this.parts.cost(binding, units)) + 1;
  }

  /**
   * Makes sure the hold covers `units` in total on `binding`. Synchronous (no database) while the
   * current block lasts; otherwise reserves the next block. False: the balance cannot cover it.
   */
  cover(binding: Binding, units: number): boolean | Promise<boolean> {
    const needed = this.needed(binding, units);
    const { held } = this;
    if (needed <= held.amount) return true;
    if (!held.allow(needed - held.amount)) return false;
    // As `extend` does, a request that comes back for more takes a block ahead.
    const wanted = held.amount > 0 ? Math.min(this.needed(binding, units + this.options.blockUnits[binding.capability]), held.amount + held.room()) : needed;
    if (!this.extending && this.writeBehind(binding, wanted - held.amount)) return true;
    return this.extend(binding, units, held.amount > 0);
  }

  /**
   * Reserves ahead of the first use, while the session is still connecting, so that its first
   * text or audio finds the hold in place instead of waiting for a database round trip. Only for
   * accounts far richer than that first stretch: on a small balance, holding ahead of use would
   * turn away requests the balance could still pay for. What it does not get, the first `cover`
   * asks for. Where the funds view allows it the stretch is counted at once, its hold written
   * behind; otherwise (a view not read yet) the funds are read and the stretch reserved as before.
   */
  prefetch(binding: Binding): void {
    if (this.extending || this.held.amount || this.settled) return;
    const minimum = this.needed(binding, this.options.firstUnits[binding.capability]);
    if (this.held.room() < minimum) return; // the first cover asks, and is refused when the budget cannot pay it
    const span = tracingOn() ? startSpan("ledger.hold", { "voxroute.credits": minimum }) : undefined;
    if (this.writeBehind(binding, minimum)) {
      span?.set({ "voxroute.held": true, "voxroute.written_behind": true });
      return span?.end();
    }
    const tenant = this.payer.tenantId;
    const run = async () =>
      (await this.ledger.spendable(tenant, binding)) >= RICH_ACCOUNT * minimum && this.take(await this.ledger.reserve(this.id, tenant, binding, minimum, 0, this.checkpointOn(binding)), minimum);
    const prefetching = run().catch((err) => {
      this.log.warn({ err, request: this.id }, "reserving ahead of the first use failed");
      return false;
    });
    this.extending = prefetching;
    void prefetching.then((held) => {
      span?.set({ "voxroute.held": held });
      span?.end();
      if (this.extending === prefetching) this.extending = undefined;
    });
  }

  /**
   * Settles once a reserve under way (the prefetch) has landed, however it went: a session that
   * says it is ready only then finds its first text or audio covered without a round trip.
   */
  async reserved(): Promise<void> {
    await this.extending?.catch(() => {});
  }

  /**
   * Counts `credits` as held at once, their hold written behind, when the ledger allows it (a
   * warm view of an account far richer than what its requests hold behind); false: the hold is
   * to be taken first. Once written, `take` counts what it got instead; what the database could not
   * hold is logged.
   */
  private writeBehind(binding: Binding, credits: number): boolean {
    if (this.settled) return false;
    const reserving = this.ledger.reserveBehind(this.id, this.payer.tenantId, binding, credits, this.checkpointOn(binding));
    if (!reserving) return false;
    this.held.add(credits);
    // Once a settle that could not be recorded released what the request held, its hold only carries the usage to its recovery.
    const landed = reserving.then(
      (added) => {
        if (this.released) return;
        this.held.add(-credits);
        if (!this.take(added, credits))
          this.log.warn({ request: this.id, tenantId: this.payer.tenantId, credits, held: total(added) }, "a hold written behind got less than was used: spent by other processes");
      },
      (err) => {
        if (this.released) return this.log.error({ err, request: this.id, usage: this.checkpoint }, "the hold that carried an unrecorded request's usage could not be written: that usage is lost");
        this.held.add(-credits);
        this.log.error({ err, request: this.id, credits }, "a hold written behind failed");
      },
    );
    this.behind.add(landed);
    return true;
  }

  /** Resolves once the holds written behind so far are in the database (or failed). */
  async written(): Promise<void> {
    this.ledger.hurry(this.id);
    await this.behind.over();
  }

  private async extend(binding: Binding, units: number, blockAhead: boolean): Promise<boolean> {
    if (this.behind.current) this.ledger.hurry(this.id);
    while (this.extending || this.behind.current) await (this.extending ?? this.behind.current);
    if (this.settled) return false; // a finished request reserves nothing more
    const { held } = this;
    if (this.needed(binding, units) <= held.amount) return true;
    const minimum = this.needed(binding, units) - held.amount;
    if (!held.allow(minimum)) return false;
    // A request that comes back for more is a long session, and from then on reserves a block
    // ahead so its next frames need no round trip.
    const ahead = blockAhead ? Math.min(this.needed(binding, units + this.options.blockUnits[binding.capability]) - held.amount - minimum, held.room() - minimum) : 0;
    this.extending = this.ledger.reserve(this.id, this.payer.tenantId, binding, minimum, ahead, this.checkpointOn(binding)).then((added) => this.take(added, minimum));
    try {
      return await this.extending;
    } finally {
      this.extending = undefined;
    }
  }

  private checkpointOn(binding: Binding): Checkpoint {
    this.checkpoint ??= { ...newCheckpoint(this.surface, this.payer.keyId, this.startedAt, binding), ...(this.voice ? { voice: this.voice } : {}) };
    return this.checkpoint;
  }

  /** Counts what a reserve added to the hold; true when it is at least `minimum`. */
  private take(added: Allocation[], minimum: number): boolean {
    const got = total(added);
    this.held.add(got);
    // From here on the hold exists: the hold keeper keeps it alive and its checkpoint current.
    if (got && !this.settled) this.ledger.holds.track(this.id, this.checkpoint!);
    return got >= minimum;
  }

  /**
   * The usage delivered so far on `binding`, in total (characters whose audio went out, seconds of
   * audio received). Synchronous and cheap: written to the hold soon after, so that a server that
   * dies before `settle` is billed this much when its hold is recovered. Only covered usage counts.
   * `cached` (TTS): what the router's cache played so far, a running total as `RequestEnd.cached`:
   * a recovered request bills those characters at the cache's price factor, as its settle would.
   */
  delivered(binding: Binding, units: number, cached?: CachedUnits): void {
    const cp = this.checkpoint;
    if (!cp || this.settled || (cp.units === units && cp.binding === binding.id && cp.provider === binding.provider.id)) return;
    this.checkpointAt(cp, binding, units, cached);
    this.ledger.holds.note(this.id);
  }

  /** The checkpoint says `units` delivered on `binding` now, `cached` (the running total) of the current part's played by the cache. */
  private checkpointAt(cp: Checkpoint, binding: Binding, units: number, cached: CachedUnits | undefined): void {
    retarget(cp, binding);
    cp.units = units;
    cp.at = Date.now();
    const own = cached && this.parts.currentCached(units, cached);
    if (own || cp.cached) cp.cached = own; // untouched without a cache: the checkpoint keeps its shape
  }

  /** The request ended (`outcome`) before it was served: it is recorded, unbilled, and its hold released. */
  async unserved(binding: Binding, startedAt: Date, outcome: Outcome): Promise<void> {
    await this.settle({ binding, status: "failed", outcome, units: 0, startedAt, latencyMs: 0, attempts: [] }).catch(() => {}); // logged by settle
  }

  /**
   * Writes the request's debits and its one activity record, releasing the rest of its hold.
   * Retried on database errors; settling twice is harmless (the request id is the record's id).
   */
  async settle(end: RequestEnd): Promise<{ credits: number }> {
    return inSettleSpan(end, () => this.settleOnce(end));
  }

  private async settleOnce(end: RequestEnd): Promise<{ credits: number }> {
    if (this.settled) throw new Error(`request ${this.id} settled twice`);
    this.settled = true;
    // A reserve taken first lands first (it is counted in `held`); the ledger runs the settle after
    // the holds written behind, those not yet written in its own batch (Ledger.settle).
    while (this.extending) await this.extending.catch(() => {});
    const parts = this.parts.settleParts(end.binding, end.units, end.cached);
    const { id, payer, surface, voice } = this;
    const usage = usageRecord({ id, tenantId: payer.tenantId, keyId: payer.keyId, surface, voice }, end, parts);
    let row: ActivityRow;
    try {
      row = await writeUsage(this.ledger, usage);
    } catch (err) {
      // The usage goes into the hold's checkpoint, and the hold is left to lapse: it is then
      // settled from it (as `interrupted`) once the database takes writes again.
      if (this.checkpoint) {
        this.checkpointAt(this.checkpoint, end.binding, usage.units, end.cached);
        this.ledger.holds.track(id, this.checkpoint);
        this.ledger.holds.abandon(id);
      }
      this.held.release(); // the recovered hold's record counts as spend once it is written
      this.released = true;
      this.log.error(
        { err, usage: { ...usage, cost: undefined, binding: `${usage.binding.provider.id}/${usage.binding.id}` } },
        "usage could not be recorded now; it is kept as the hold's checkpoint",
      );
      throw err;
    }
    // Once written, whatever comes of telling it: the write is not tried again for an observer's error.
    this.ledger.holds.forget(id);
    this.held.spent(row.credits, end.startedAt);
    const served = parts ?? [{ binding: end.binding, units: usage.units }];
    for (const [i, part] of served.entries()) {
      this.settledWith({ binding: part.binding, units: part.units, credits: row.partCredits?.[i] ?? (i === served.length - 1 ? row.credits : 0) });
    }
    if (this.request) Object.assign(this.request, { provider: end.binding.provider.id, model: end.binding.canonical, credits: row.credits });
    return row;
  }
}
