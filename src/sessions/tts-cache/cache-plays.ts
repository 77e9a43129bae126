import type { CachedUnits } from "../../ledger/cost.ts";
import type { CachedTtsStream } from "./cached-stream.ts";
import type { TtsCache } from "./tts-cache.ts";

// What the TTS cache played for one session, across the candidates that served it: a running total,
// as each failover part (`MeteredRequest.partServed`) and the session's record are billed with it.

export class CachePlays {
  /** Characters the cache played for the candidates before the current one. */
  private before = 0;
  /** The cache's stream under the current candidate's (absent when the cache does not serve it). */
  private current: CachedTtsStream | undefined;
  /** The latest running total handed out: asked for with every chunk of audio, it is made anew only when it changed. */
  private last: CachedUnits | undefined;

  constructor(private readonly cache: TtsCache | undefined) {}

  /** What the cache played for the candidates before the current one. */
  beforeCurrent(): CachedUnits | undefined {
    return this.cache?.played(undefined, this.before);
  }

  /** A candidate took the session over; `cached` is the cache's stream under its stream. */
  serving(cached: CachedTtsStream | undefined): void {
    this.current = cached;
  }

  /** The current candidate is given up: what the cache played for it counts for the ones before the next. */
  movingOn(): void {
    this.before = this.cache?.played(this.current, this.before)?.units ?? 0;
    this.current = undefined;
  }

  /** What the cache played for the session so far (not to be changed: it may be handed out again). */
  played(): CachedUnits | undefined {
    const units = this.before + (this.current?.cachedChars ?? 0);
    if (units !== (this.last?.units ?? 0)) this.last = this.cache?.played(this.current, this.before);
    return this.last;
  }
}
