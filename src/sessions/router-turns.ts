import type { AudioLane, AudioSessionOptions } from "../pools/audio-pool.ts";
import type { FromAudio } from "../../workers/audio-protocol.ts";
import type { VadOptions } from "../audio/vad.ts";
import { ProviderError } from "../errors.ts";
import type { SttEvent, SttStream } from "../providers/stt-types.ts";
import { AsyncQueue } from "../util/async-queue.ts";

// Router turns: the router VAD decides the turns of a recognizer with no turn detector of its own,
// whatever its family (as LiveKit's `StreamAdapter(stt, vad)`). The wrapper reads a copy of the
// audio in a VAD lane (the audio workers) and speaks to the recognizer only as an `SttStream`:
// with auto commit an end of speech commits the stream, and the stream's answer is told as the
// router's commit. The stream must answer each `commit()` with a `committed` and each `clear()`
// with a `cleared`, in order (a family with a commit frame does). Adapters never see the lanes.

/** Where router VAD lanes are opened: the audio workers (`AudioPool`). */
export interface VadLanes {
  open(options: AudioSessionOptions, listener: (msg: FromAudio) => void): AudioLane;
}

export interface RouterTurnsOptions {
  /** Sample rate of the stream's audio: 16-bit little-endian PCM, mono. */
  rate: number;
  vad: VadOptions;
  /** An end of speech commits the turn (`commit_strategy=auto`); otherwise it is only signalled. */
  autoCommit: boolean;
  /** The VAD's speech probability is told too (`vad` events, a few a second). */
  scores?: boolean;
}

/** `stream` with the router VAD's turns: start and end signals, and with auto commit a commit at each end of speech. */
export function withRouterTurns(stream: SttStream, lanes: VadLanes, options: RouterTurnsOptions): SttStream {
  return new RouterTurns(stream, lanes, options);
}

/** A commit or clear the stream has yet to answer, and router events that came after it (they belong to the next turn). */
interface Pending {
  /** Where the VAD heard the speech end, for a commit of the router's own. */
  routerAtMs?: number;
  after: SttEvent[];
}

class RouterTurns implements SttStream {
  private readonly out = new AsyncQueue<SttEvent>();
  private readonly lane: AudioLane;
  private readonly pending: Pending[] = [];
  /**
   * The VAD hears speech that no client commit or clear has ended. The VAD is not reset by those,
   * so the end of an utterance they cut short is ignored: its turn is over.
   */
  private speaking = false;

  constructor(
    private readonly stream: SttStream,
    lanes: VadLanes,
    private readonly options: RouterTurnsOptions,
  ) {
    this.lane = lanes.open({ rate: options.rate, vad: options.vad, scores: options.scores, autoCommit: false, interim: false }, (msg) => this.onVad(msg));
    void this.relay();
  }

  [Symbol.asyncIterator]() {
    return this.out[Symbol.asyncIterator]();
  }

  /** The stream keeps the frame (it may take ownership); the lane, which transfers what it is given, gets a copy. */
  send(audio: Uint8Array): void {
    this.stream.send(audio);
    this.lane.audio(audio.slice());
  }

  commit(): void {
    this.ask("commit");
    this.lane.commit();
  }

  clear(): void {
    this.ask("clear");
    this.lane.clear();
  }

  /** The stream ends once the VAD has read all the audio, so the last turn is committed first. */
  end(): void {
    this.lane.end();
  }

  cancel(): void {
    this.lane.drop();
    this.stream.cancel();
    this.out.end();
  }

  get bufferedAmount(): number {
    return this.stream.bufferedAmount;
  }

  private ask(what: "commit" | "clear", routerAtMs?: number): void {
    this.pending.push({ routerAtMs, after: [] });
    if (what === "clear") this.stream.clear();
    else this.stream.commit();
  }

  /** The stream's events, in order; its answer to a router commit is told as the router's. */
  private async relay(): Promise<void> {
    try {
      for await (const ev of this.stream) {
        if ((ev.type === "committed" && ev.origin === "client") || ev.type === "cleared") this.answered(ev);
        else this.out.push(ev);
      }
      this.out.end();
    } catch (err) {
      this.out.fail(err);
    } finally {
      this.lane.drop();
    }
  }

  private answered(ev: SttEvent): void {
    const done = this.pending.shift();
    const atMs = done?.routerAtMs;
    if (atMs !== undefined) {
      this.out.push({ type: "signal", origin: "router", signal: "end", atMs });
      this.out.push({ type: "committed", origin: "router", atMs });
    } else this.out.push(ev);
    for (const later of done?.after ?? []) this.out.push(later);
  }

  /** A router event: held back behind a commit or clear on its way, so it lands in the turn it belongs to. */
  private emit(ev: SttEvent): void {
    const last = this.pending.at(-1);
    if (last) last.after.push(ev);
    else this.out.push(ev);
  }

  private onVad(msg: FromAudio): void {
    if (msg.ev === "speech_started") {
      this.speaking = true;
      this.emit({ type: "signal", origin: "router", signal: "started", atMs: msg.atMs });
    } else if (msg.ev === "speech_ended") {
      if (!this.speaking) return;
      this.speaking = false;
      if (this.options.autoCommit) this.ask("commit", msg.atMs);
      else this.emit({ type: "signal", origin: "router", signal: "end", atMs: msg.atMs });
    } else if (msg.ev === "vad_score") this.emit({ type: "vad", score: msg.score, atMs: msg.atMs });
    else if (msg.ev === "committed" || msg.ev === "cleared")
      this.speaking = false; // in order with the audio before the commit
    else if (msg.ev === "ended") this.stream.end();
    else if (msg.ev === "error") {
      this.out.fail(new ProviderError(`the router VAD failed: ${msg.message}`, true));
      this.stream.cancel();
    }
  }
}
