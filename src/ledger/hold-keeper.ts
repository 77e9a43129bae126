import type { Database } from "../db/open.ts";
import type { Logger } from "../log.ts";
import type { LedgerBatcher } from "./batch.ts";
import type { Recovery } from "./batch-requests.ts";
import type { Checkpoint } from "./checkpoint.ts";

// Keeps this process's credit holds alive and their checkpoints current, and settles the holds
// of processes that died.
// - A request's delivered usage is noted in memory (no database on the session's path) and
//   written to its hold row within FLUSH_DELAY_MS, many requests in one transaction, one
//   transaction in flight at a time: a crash loses at most that last stretch of usage.
// - Every live hold's expiry is pushed back at least every quarter of the hold lifetime, in the
//   same transactions; a hold whose process died stops being refreshed and lapses.
// - Lapsed holds (at start-up, then every quarter lifetime) are settled from their checkpoints
//   through the batcher: under the tenant's lock, once, whichever process finds them first.

/** How long a noted change may wait to be batched with others before it is written. */
const FLUSH_DELAY_MS = 200;
const MAX_IDS = 500;

interface Entry {
  checkpoint: Checkpoint;
  dirty: boolean;
  /** Settling failed: write this last checkpoint, then stop refreshing so the hold lapses and is recovered. */
  final: boolean;
  refreshedAt: number;
}

export class HoldKeeper {
  private readonly live = new Map<string, Entry>();
  private log: Logger | undefined;
  private timer: Timer | undefined;
  private flushTimer: Timer | undefined;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly batcher: LedgerBatcher,
    private readonly holdTtlMs: number,
    private readonly now: () => Date,
  ) {}

  /** Starts refreshing, writing checkpoints and recovering lapsed holds (a first sweep at once). */
  start(log: Logger): void {
    this.log = log;
    this.timer = setInterval(() => this.tick(), this.holdTtlMs / 4);
    this.timer.unref();
    this.tick();
  }

  /** Writes what is still unwritten (holds written behind that still wait included) and stops. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.flushTimer);
    this.log = undefined; // nothing is scheduled from here on
    await this.batcher.writeDeferred();
    await this.sweeping;
    await this.flushing;
    await this.flush();
  }

  /** The request's hold now exists in the database (with this checkpoint as it was when its batch ran). */
  track(holdId: string, checkpoint: Checkpoint): void {
    if (this.live.has(holdId)) return;
    this.live.set(holdId, { checkpoint, dirty: false, final: false, refreshedAt: this.now().getTime() });
    if (checkpoint.units > 0) this.note(holdId); // usage noted while the hold was being taken
  }

  /** The request's checkpoint changed: it is written soon. */
  note(holdId: string): void {
    const entry = this.live.get(holdId);
    if (!entry) return;
    entry.dirty = true;
    this.schedule();
  }

  /** The request was settled: nothing more to keep. */
  forget(holdId: string): void {
    this.live.delete(holdId);
  }

  /** Settling failed: the checkpoint (with the final usage) is written, and the hold left to lapse and be recovered. */
  abandon(holdId: string): void {
    const entry = this.live.get(holdId);
    if (!entry) return;
    entry.final = true;
    this.note(holdId);
  }

  private schedule(): void {
    if (this.flushTimer || !this.log) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS);
    this.flushTimer.unref();
  }

  private tick(): void {
    void this.flush();
    this.sweeping ??= this.sweep().then(
      () => void (this.sweeping = undefined),
      (err) => {
        this.sweeping = undefined;
        this.log?.error({ err }, "recovering lapsed credit holds failed");
      },
    );
  }

  /** Writes changed checkpoints and refreshes holds not written lately, in one transaction. */
  async flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    const now = this.now().getTime();
    const expiresAt = new Date(now + this.holdTtlMs);
    const written: [string, Entry][] = [];
    const refreshed: string[] = [];
    for (const [id, entry] of this.live) {
      if (entry.dirty) written.push([id, entry]);
      else if (!entry.final && entry.refreshedAt <= now - this.holdTtlMs / 4) refreshed.push(id);
    }
    // Hold rows are locked in id order, as the batches lock them: no deadlock between the two.
    written.sort(([a], [b]) => (a < b ? -1 : 1));
    if (written.length === 0 && refreshed.length === 0) return;
    for (const [, entry] of written) {
      entry.dirty = false;
      entry.refreshedAt = now;
    }
    for (const id of refreshed) this.live.get(id)!.refreshedAt = now;
    const rows = written.map(([id, entry]) => [JSON.stringify(entry.checkpoint), entry.final ? new Date(now) : expiresAt, id]);
    this.flushing = this.database.sql
      .transaction(async (tx) => {
        for (const row of rows) tx.later("UPDATE holds SET checkpoint = ?, expires_at = ? WHERE id = ?", row);
        for (let i = 0; i < refreshed.length; i += MAX_IDS) {
          const ids = refreshed.slice(i, i + MAX_IDS);
          tx.later(`UPDATE holds SET expires_at = ? WHERE id IN (${ids.map(() => "?").join(", ")})`, [expiresAt, ...ids]);
        }
      })
      .then(
        () => {
          for (const [id, entry] of written) if (entry.final && !entry.dirty) this.live.delete(id);
        },
        (err) => {
          this.log?.warn({ err, checkpoints: written.length, refreshed: refreshed.length }, "writing credit hold checkpoints failed; retrying");
          for (const [, entry] of written) entry.dirty = true;
          for (const id of refreshed) {
            const entry = this.live.get(id);
            if (entry) entry.refreshedAt = 0;
          }
        },
      )
      .finally(() => {
        this.flushing = undefined;
        if (this.flushAgain) {
          this.flushAgain = false;
          this.schedule();
        }
      });
    return this.flushing;
  }

  /** Settles every lapsed hold not kept alive by this process; returns how many of each outcome. */
  async sweep(): Promise<Record<Recovery, number>> {
    const now = this.now();
    const counts: Record<Recovery, number> = { recovered: 0, released: 0, skipped: 0 };
    const lapsed = await this.database.sql.query<{ id: string; tenant_id: string }>("SELECT id, tenant_id FROM holds WHERE expires_at < ? ORDER BY expires_at LIMIT 500", [now]);
    const orphans = lapsed.filter((h) => !this.live.has(h.id));
    const outcomes = await Promise.all(orphans.map((h) => this.batcher.recover({ holdId: h.id, tenantId: h.tenant_id, lapsedBefore: now })));
    for (const o of outcomes) counts[o]++;
    if (counts.recovered || counts.released) this.log?.warn(counts, "settled the credit holds of requests whose process died");
    return counts;
  }
}
