import type { Binding } from "../catalogue/types.ts";
import type { SttEvent } from "../providers/stt-types.ts";
import type { SttCommand } from "./stt-events.ts";
import { KeptAudio } from "./stt-kept-audio.ts";
import { onCallerClock, Replay, type ReplayTarget } from "./stt-replay.ts";

// A streaming STT session's failover in the middle of the session (docs/routing.md, "Mid-session
// failover: STT"): everything the client sends is kept until the provider has settled it; when the
// provider fails, the next candidate is given what was kept again (`Replay`) and its events are
// told on the caller's clock. Its finals then follow the last final the client had, with nothing
// lost or said twice; the interims of the failed provider after that final are superseded.

/** A stretch of the session served by one binding, on the caller's clock (the session's log line lists them). */
export interface ServedPart {
  provider: string;
  model: string;
  fromMs: number;
}

/** The session's move to another provider, as its client is told. */
export interface Switch {
  /** The provider that served the session before. */
  previous: string;
  reason: string;
  /** Where the replay starts on the caller's clock: the new provider hears the audio from there on. */
  fromMs: number;
}

export class SttFailover {
  private readonly kept: KeptAudio;
  /** Where the serving provider's clock starts on the caller's. */
  private offsetMs = 0;
  private replay: Replay | undefined;
  private lastFailure = "";
  /** False once the session is served by its last candidate: no provider could be given the input again. */
  private keeping = true;
  readonly served: ServedPart[] = [];

  constructor(
    private readonly bytesPerSecond: number,
    frameBytes: number,
  ) {
    this.kept = new KeptAudio(bytesPerSecond, frameBytes);
  }

  /** Client input that went to the provider (or waits for one). */
  keep(item: Uint8Array | SttCommand): void {
    if (!this.keeping) return;
    if (item instanceof Uint8Array) this.kept.audio(item);
    else this.kept.command(item);
  }

  /** Bytes of audio let go past the bound before a provider settled them. */
  get droppedBytes(): number {
    return this.kept.droppedBytes;
  }

  failed(reason: string): void {
    this.lastFailure = reason;
  }

  /** A provider event on the caller's clock; what it settles is not kept any longer. */
  heard(raw: SttEvent): SttEvent {
    const ev = onCallerClock(raw, this.offsetMs);
    if (ev.type === "transcript" && ev.final) this.kept.settled(ev.endMs);
    else if (ev.type === "committed" || ev.type === "cleared") {
      this.kept.settled(ev.atMs);
      if (ev.type === "cleared" || ev.origin === "client") this.kept.answered();
    }
    return ev;
  }

  /** How the client is told that the next provider takes over; undefined when none served the session before. */
  switching(): Switch | undefined {
    const previous = this.served.at(-1)?.provider;
    if (previous === undefined) return undefined;
    return { previous, reason: this.lastFailure, fromMs: Math.round(this.kept.startMs) };
  }

  /**
   * `binding` is ready: it is given what was kept (after a switch in real time when its family
   * asks), then the input that comes meanwhile, before the session sends straight on. With no
   * candidate after it in the session's plan, nothing is kept from then on.
   */
  resume(binding: Binding, candidates: Binding[], target: ReplayTarget, realtime: boolean): void {
    this.stop();
    const after = this.served.length > 0;
    this.offsetMs = this.kept.startMs;
    this.served.push({ provider: binding.provider.id, model: binding.canonical, fromMs: Math.round(this.offsetMs) });
    const replay = new Replay(this.kept.replay(), this.bytesPerSecond, realtime && after, target, () => {
      if (this.replay === replay) this.replay = undefined;
    });
    this.replay = replay;
    // The first place is the safe one should a binding appear twice.
    if (candidates.indexOf(binding) === candidates.length - 1) {
      this.keeping = false;
      this.kept.clear();
    }
    replay.start();
  }

  get keptBytes(): number {
    return this.kept.bytes;
  }

  /** Bytes of audio a replay has yet to send. */
  get waitingBytes(): number {
    return this.replay?.waitingBytes ?? 0;
  }

  /** Input for the provider: false when it is to be sent straight on, true when a replay took it. */
  queued(item: Uint8Array | SttCommand): boolean {
    if (!this.replay) return false;
    this.replay.push(item);
    return true;
  }

  stop(): void {
    this.replay?.stop();
    this.replay = undefined;
  }
}
