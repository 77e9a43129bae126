import type { ApiError } from "../errors.ts";
import type { Payer } from "../ledger/meter-types.ts";
import type { Metrics } from "../metrics.ts";
import { awaitInRequest } from "../request-context.ts";

export interface LiveSession {
  readonly finished: Promise<void>;
  shutdown(): void;
  /** Who pays, once the session is admitted: its key is watched for revocation (see AccessWatch). */
  readonly payer?: Payer;
  /** Ends the session from the server's side with this error (a revoked key, a disabled tenant). */
  end?(err: ApiError): void;
}

/** The sessions open right now: counted for /metrics, drained on shutdown. */
export class SessionRegistry {
  private readonly live = new Set<LiveSession>();

  constructor(private readonly metrics: Metrics) {}

  add(session: LiveSession, channel: string): void {
    this.live.add(session);
    awaitInRequest(session.finished); // a streamed HTTP answer's log line waits for its session
    const open = this.metrics.openSessions;
    open.set(channel, (open.get(channel) ?? 0) + 1);
    void session.finished.finally(() => {
      this.live.delete(session);
      open.set(channel, open.get(channel)! - 1);
    });
  }

  get size(): number {
    return this.live.size;
  }

  /** The open sessions, as of now. */
  [Symbol.iterator](): IterableIterator<LiveSession> {
    return this.live.values();
  }

  /** Lets open sessions finish for up to `graceMs`, then ends the rest (1001). */
  async drain(graceMs: number): Promise<void> {
    const all = () => Promise.allSettled([...this.live].map((s) => s.finished));
    let timer: Timer | undefined;
    const graceOver = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), graceMs)));
    const outcome = await Promise.race([all(), graceOver]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      for (const s of this.live) s.shutdown();
      await all();
    }
  }
}
