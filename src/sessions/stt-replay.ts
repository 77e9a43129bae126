import { UNSENT_HIGH_WATER_BYTES } from "../providers/paced-audio.ts";
import type { SttEvent } from "../providers/stt-types.ts";
import type { SttCommand } from "./stt-events.ts";

// The kept audio and commands (stt-kept-audio.ts) said again to the provider that took over a
// session, followed by what the client sends meanwhile, in order and at the pace the provider
// takes: as fast as its socket takes it (at most `UNSENT_HIGH_WATER_BYTES` waiting to go out), or
// in real time for a family that asks for it (`realtimeInput`: it then hears the caller that much
// later for the rest of the session). Once nothing waits, the session sends straight on again.

/** How soon a replay looks again at a socket past its high-water mark (a client WebSocket tells no drain). */
const DRAIN_POLL_MS = 10;

export interface ReplayTarget {
  send(item: Uint8Array | SttCommand): void;
  /** Bytes given that have not yet gone out to the provider. */
  unsent(): number;
}

export class Replay {
  private readonly t0 = performance.now();
  private sentBytes = 0;
  /** Bytes of audio in the queue. */
  waitingBytes: number;
  private timer: Timer | undefined;
  private stopped = false;

  constructor(
    private readonly queue: (Uint8Array | SttCommand)[],
    private readonly bytesPerSecond: number,
    private readonly realtime: boolean,
    private readonly target: ReplayTarget,
    /** Nothing waits any more: the session sends straight on. */
    private readonly caughtUp: () => void,
  ) {
    this.waitingBytes = queue.reduce((sum, item) => sum + (item instanceof Uint8Array ? item.byteLength : 0), 0);
  }

  start(): void {
    this.pump();
  }

  /** Client input that came during the replay: it goes after what waits. */
  push(item: Uint8Array | SttCommand): void {
    this.queue.push(item);
    if (item instanceof Uint8Array) this.waitingBytes += item.byteLength;
    if (!this.timer) this.pump();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private pump(): void {
    this.timer = undefined;
    while (!this.stopped && this.queue.length) {
      const item = this.queue[0]!;
      if (item instanceof Uint8Array) {
        const wait = this.realtime ? this.t0 + (this.sentBytes / this.bytesPerSecond) * 1000 - performance.now() : this.target.unsent() >= UNSENT_HIGH_WATER_BYTES ? DRAIN_POLL_MS : 0;
        if (wait > 0) return void (this.timer = setTimeout(() => this.pump(), wait));
        this.sentBytes += item.byteLength;
        this.waitingBytes -= item.byteLength;
      }
      this.target.send(item);
      this.queue.shift();
    }
    if (!this.stopped) this.caughtUp();
  }
}

/** A provider's event on the caller's clock: the provider that took over heard the audio from `offsetMs` on. */
export function onCallerClock(ev: SttEvent, offsetMs: number): SttEvent {
  if (!offsetMs) return ev;
  const at = (ms: number) => Math.round(ms + offsetMs);
  if (ev.type === "transcript") return { ...ev, startMs: at(ev.startMs), endMs: at(ev.endMs) };
  return { ...ev, atMs: at(ev.atMs) };
}
