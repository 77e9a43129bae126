import { ProviderError } from "../../errors.ts";
import { AUDIO_BACKLOG_BYTES, ttsEventQueue } from "../../providers/audio-backlog.ts";
import type { Utterance } from "../../providers/sentences.ts";
import type { TtsEvent, TtsStream } from "../../providers/types.ts";
import { UtteranceStream } from "../../providers/utterance-stream.ts";
import { codePoints } from "../../util/code-points.ts";
import { audioSeconds, type CacheEntry, type CachedTimes, shifted } from "./entry.ts";

/** Where a cached stream reads and keeps its entries. */
export interface EntryStore {
  key(text: string): string;
  get(key: string): Promise<CacheEntry | undefined>;
  set(key: string, entry: CacheEntry): void;
}

/**
 * A provider's stream spoken one utterance at a time: an utterance in the cache is played from it
 * (no request upstream), any other is written to the provider with a flush, and its audio and
 * timings are kept once the provider answered that flush. An utterance cut short (the session
 * cancelled, the provider failed) is never kept. Character timings go on one timeline across both.
 */
export class CachedTtsStream extends UtteranceStream {
  private readonly events: AsyncIterator<TtsEvent>;
  /** Seconds of audio this stream and the provider's stream have yielded (timings are moved between the two). */
  private at = 0;
  private innerAt = 0;
  /** Characters served from the cache (billed apart), as the caller wrote them. */
  cachedChars = 0;
  /** Characters of the utterances taken so far, as this stream was given them. */
  private through = 0;
  /** The caller's characters behind this stream's first `n` (rules before the cache may have changed the text). */
  private callerAt = (n: number) => n;
  private stopped = false;
  /** Characters written to the provider, and its `flushed` answers still to come for utterances its `spoken` already ended. */
  private written = 0;
  private lateFlushes = 0;

  constructor(
    private readonly inner: TtsStream,
    private readonly provider: string,
    private readonly store: EntryStore,
  ) {
    super(inner.audioFormat, ttsEventQueue(provider));
    this.events = inner[Symbol.asyncIterator]();
  }

  /** Counts cached characters through `callerAt` (the caller's characters behind the first `n` given to this stream). */
  countAs(callerAt: (n: number) => number): void {
    this.callerAt = callerAt;
  }

  protected async speak(utterance: Utterance): Promise<void> {
    const from = this.through;
    this.through += utterance.chars;
    const key = this.store.key(utterance.raw);
    const hit = await this.store.get(key);
    if (hit) return this.play(hit, from);
    // As written, white space around it included: timings cover every character written.
    this.inner.write(utterance.raw);
    this.inner.flush();
    this.written += codePoints(utterance.raw);
    const audio: Uint8Array[] = [];
    const timings: CachedTimes[] = [];
    const startedAt = this.innerAt;
    for (;;) {
      const next = await this.events.next();
      if (next.done) {
        if (this.stopped) return;
        throw new ProviderError(`${this.provider} ended the stream before it spoke the utterance`, true);
      }
      const ev = next.value;
      if (ev.type === "flushed") {
        if (this.lateFlushes === 0) break;
        this.lateFlushes--;
        continue;
      }
      // The provider says the utterance's audio is all out: it is done though the flush's answer may never come (a provider failing right after).
      if (ev.type === "spoken") {
        if (ev.chars < this.written) continue;
        this.lateFlushes++;
        break;
      }
      if (ev.type === "alignment") {
        const own = { alignment: shifted(ev.alignment, -startedAt), ...(ev.normalized ? { normalized: shifted(ev.normalized, -startedAt) } : {}) };
        timings.push(own);
        this.queue.push(this.timed(own));
        continue;
      }
      // Kept as a copy: the client's side may hand the chunk on (a transfer) before the utterance ends.
      audio.push(ev.audio.slice());
      this.queue.push(ev);
      const room = this.queue.roomFor(AUDIO_BACKLOG_BYTES);
      if (room) await room;
    }
    if (this.stopped) return;
    const entry = { audio: Buffer.concat(audio), timings };
    const seconds = audioSeconds(entry.audio, this.audioFormat);
    this.innerAt += seconds;
    this.at += seconds;
    if (entry.audio.byteLength) this.store.set(key, entry);
  }

  private play(entry: CacheEntry, from: number): void {
    this.cachedChars += this.callerAt(this.through) - this.callerAt(from);
    for (const t of entry.timings) this.queue.push(this.timed(t));
    this.queue.push({ type: "audio", audio: entry.audio.slice() });
    this.at += audioSeconds(entry.audio, this.audioFormat);
  }

  /** Cached timings on this stream's timeline. */
  private timed({ alignment, normalized }: CachedTimes): TtsEvent {
    return { type: "alignment", alignment: shifted(alignment, this.at), ...(normalized ? { normalized: shifted(normalized, this.at) } : {}) };
  }

  protected finish(): void {
    // A provider that times every character written is given the white space at the end too.
    const tail = this.trailing();
    if (tail) this.inner.write(tail);
    this.inner.end();
    void this.drainInner().then(
      () => this.queue.end(),
      (err) => this.queue.fail(err),
    );
  }

  /** The provider's stream after `end`: what it still yields (at most the end's white space: no utterance) until it ends. */
  private async drainInner(): Promise<void> {
    for (let next = await this.events.next(); !next.done; next = await this.events.next()) {
      const ev = next.value;
      if (ev.type === "audio") this.queue.push(ev);
      else if (ev.type === "alignment")
        this.queue.push(this.timed({ alignment: shifted(ev.alignment, -this.innerAt), ...(ev.normalized ? { normalized: shifted(ev.normalized, -this.innerAt) } : {}) }));
    }
  }

  protected stop(): void {
    this.stopped = true;
    this.inner.cancel();
  }
}
