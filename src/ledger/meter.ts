import type { Binding, Capability } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { Outcome } from "./activity.ts";
import type { Logger } from "../log.ts";
import { currentRequest } from "../request-context.ts";
import { add, rational } from "../catalogue/price.ts";
import { newCheckpoint, retarget, target, type Checkpoint } from "./checkpoint.ts";
import { ceilCredits, costOf, rateOf, usageUnit } from "./cost.ts";
import { ServedParts } from "./parts.ts";
import type { Ledger } from "./ledger.ts";
import { total, type Allocation } from "./sources.ts";

// The one entry point that every channel (native TTS and STT, compatibility surfaces, realtime)
// uses to bill a request:
//   admit()  — before any upstream work: drop unpriced bindings (422 when none is left) and those
//              the tenant cannot pay for (402 when none is left). Read-only.
//   start()  — a MeteredRequest that reserves credits ahead of use, in blocks, notes the usage it
//              delivered (the checkpoint a crash is billed from), and settles once.
// Units (seconds of audio, characters of text) are counted and rounded by usage.ts, the one place
// that decides them; every session measures what it delivered through it.
// Holds are taken before a provider is given work, so a balance never pays for more than it has:
// it can dip below zero only by the sub-credit carry (< 1 credit) or, after a fallback to a
// dearer provider, by that one request's difference.

export interface MeterOptions {
  /** How far ahead of use credits are reserved: units (characters or seconds) per block. */
  blockUnits: Record<Capability, number>;
  /** What a session reserves while it connects (`prefetch`): a typical first sentence or stretch of audio. */
  firstUnits: Record<Capability, number>;
}

export const DEFAULT_METER_OPTIONS: MeterOptions = { blockUnits: { tts: 2000, stt: 60 }, firstUnits: { tts: 200, stt: 10 } };

export interface Payer {
  tenantId: string;
  keyId?: string;
  keyPrefix?: string;
}

/** A request's usage as it was settled: for metrics. */
export interface Settled {
  binding: Binding;
  units: number;
  credits: number;
}

export class Meter {
  private readonly observers: ((settled: Settled) => void)[] = [];

  constructor(
    readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly options: MeterOptions = DEFAULT_METER_OPTIONS,
  ) {}

  /**
   * The candidates this payer may use, in order; 422 `model_not_priced` / 402 `insufficient_balance`
   * when none. Each model of a fallback chain (`fallback`: its index in `fallbacks`; none for the
   * primary) must have a price: one that has none is refused, naming it, not skipped in silence.
   */
  async admit<B extends Binding & { fallback?: number }>(payer: Payer, candidates: B[]): Promise<B[]> {
    const unpriced = candidates.find((c) => !candidates.some((b) => b.fallback === c.fallback && b.price));
    if (unpriced) {
      const member = unpriced.fallback === undefined ? undefined : `fallbacks[${unpriced.fallback}].model`;
      if (!member) throw new ApiError("model_not_priced", "this model has no price on any allowed provider");
      throw new ApiError("model_not_priced", `${member}: ${unpriced.canonical} has no price on any allowed provider`, { param: member });
    }
    const priced = candidates.filter((b) => b.price);
    if (priced.length === 0) throw new ApiError("model_not_priced", "this model has no price on any allowed provider");
    const affordable: B[] = [];
    for (const b of priced) {
      const minimum = Math.max(1, ceilCredits(costOf(rateOf(b), 1)));
      if ((await this.ledger.spendable(payer.tenantId, b)) >= minimum) affordable.push(b);
    }
    if (affordable.length === 0) throw new ApiError("insufficient_balance", "the balance cannot pay for this request");
    return affordable;
  }

  start(id: string, payer: Payer, surface: string): MeteredRequest {
    return new MeteredRequest(id, payer, surface, this.ledger, this.log, this.options, (settled) => {
      for (const observe of this.observers) observe(settled);
    });
  }

  /** Calls `observe` with every request's usage once it is settled. */
  observe(observe: (settled: Settled) => void): void {
    this.observers.push(observe);
  }
}

/** How a request ended, as it is settled. */
export interface RequestEnd {
  binding: Binding;
  status: "completed" | "failed";
  outcome: Outcome;
  units: number;
  startedAt: Date;
  /** Time to first output (audio or transcript), or the whole duration when there was none. */
  latencyMs: number;
  attempts: { provider: string; reason: string }[];
}

const SETTLE_TRIES = 5;
/** How many times its first stretch an account must be able to pay before a session reserves it ahead. */
const RICH_ACCOUNT = 100;

export class MeteredRequest {
  /** Credits held so far (the hold row in the database says from which sources). */
  private held = 0;
  private extending: Promise<boolean> | undefined;
  private settled = false;
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
  ) {}

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
   */
  partServed(binding: Binding, upTo: number, nextVoice?: string): void {
    if (this.settled) return;
    this.parts.close(binding, upTo, nextVoice);
    if (this.checkpoint) {
      this.checkpoint.parts = this.parts.checkpointParts(target);
      this.checkpoint.servingVoice = this.parts.voice;
      this.checkpoint.units = upTo; // until the next binding delivers more
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
    if (this.needed(binding, units) <= this.held) return true;
    return this.extend(binding, units, this.held > 0);
  }

  /**
   * Reserves ahead of the first use, while the session is still connecting, so that its first
   * text or audio finds the hold in place instead of waiting for a database round trip. Only for
   * accounts far richer than that first stretch: on a small balance, holding ahead of use would
   * turn away requests the balance could still pay for. What it does not get, the first `cover`
   * asks for.
   */
  prefetch(binding: Binding): void {
    if (this.extending || this.held || this.settled) return;
    const minimum = this.needed(binding, this.options.firstUnits[binding.capability]);
    const tenant = this.payer.tenantId;
    const run = async () =>
      (await this.ledger.spendable(tenant, binding)) >= RICH_ACCOUNT * minimum && this.take(await this.ledger.reserve(this.id, tenant, binding, minimum, 0, this.checkpointOn(binding)), minimum);
    const prefetching = run().catch((err) => {
      this.log.warn({ err, request: this.id }, "reserving ahead of the first use failed");
      return false;
    });
    this.extending = prefetching;
    void prefetching.then(() => {
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

  private async extend(binding: Binding, units: number, blockAhead: boolean): Promise<boolean> {
    while (this.extending) await this.extending;
    if (this.settled) return false; // a finished request reserves nothing more
    if (this.needed(binding, units) <= this.held) return true;
    const minimum = this.needed(binding, units) - this.held;
    // A request that comes back for more is a long session, and from then on reserves a block
    // ahead so its next frames need no round trip.
    const ahead = blockAhead ? this.needed(binding, units + this.options.blockUnits[binding.capability]) - this.held - minimum : 0;
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
    this.held += got;
    // From here on the hold exists: the hold keeper keeps it alive and its checkpoint current.
    if (got && !this.settled) this.ledger.holds.track(this.id, this.checkpoint!);
    return got >= minimum;
  }

  /**
   * The usage delivered so far on `binding`, in total (characters whose audio went out, seconds of
   * audio received). Synchronous and cheap: written to the hold soon after, so that a server that
   * dies before `settle` is billed this much when its hold is recovered. Only covered usage counts.
   */
  delivered(binding: Binding, units: number): void {
    const cp = this.checkpoint;
    if (!cp || this.settled || (cp.units === units && cp.binding === binding.id && cp.provider === binding.provider.id)) return;
    retarget(cp, binding);
    cp.units = units;
    cp.at = Date.now();
    this.ledger.holds.note(this.id);
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
    if (this.settled) throw new Error(`request ${this.id} settled twice`);
    this.settled = true;
    // Reserves still under way must land first: their credits are released by this settle.
    while (this.extending) await this.extending.catch(() => {});
    const parts = this.parts.settleParts(end.binding, end.units);
    const units = parts ? parts.reduce((n, p) => n + p.units, 0) : end.units;
    const input = {
      id: this.id,
      tenantId: this.payer.tenantId,
      keyId: this.payer.keyId,
      surface: this.surface,
      binding: end.binding,
      status: end.status,
      outcome: end.outcome,
      usageUnit: usageUnit(end.binding),
      units,
      cost: parts ? parts.reduce((c, p) => add(c, p.cost), rational(0n)) : costOf(rateOf(end.binding), end.units),
      startedAt: end.startedAt,
      finishedAt: new Date(),
      latencyMs: end.latencyMs,
      attempts: end.attempts,
      voice: this.voice,
      ...(parts ? { parts } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.ledger.settle(input);
        this.ledger.holds.forget(this.id);
        const served = parts ?? [{ binding: end.binding, units }];
        for (const [i, part] of served.entries()) {
          this.settledWith({ binding: part.binding, units: part.units, credits: row.partCredits?.[i] ?? (i === served.length - 1 ? row.credits : 0) });
        }
        if (this.request) Object.assign(this.request, { provider: end.binding.provider.id, model: end.binding.canonical, credits: row.credits });
        return row;
      } catch (err) {
        if (attempt >= SETTLE_TRIES) {
          // The usage goes into the hold's checkpoint, and the hold is left to lapse: it is then
          // settled from it (as `interrupted`) once the database takes writes again.
          if (this.checkpoint) {
            retarget(this.checkpoint, end.binding);
            Object.assign(this.checkpoint, { units, at: Date.now() });
            this.ledger.holds.track(this.id, this.checkpoint);
            this.ledger.holds.abandon(this.id);
          }
          this.log.error(
            { err, usage: { ...input, cost: undefined, binding: `${input.binding.provider.id}/${input.binding.id}` } },
            "usage could not be recorded now; it is kept as the hold's checkpoint",
          );
          throw err;
        }
        await Bun.sleep(50 * 2 ** attempt);
      }
    }
  }
}
