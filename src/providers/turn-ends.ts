import type { SttEvent, SttStream } from "./stt-types.ts";
import type { JsonSocketStream } from "./upstream-ws.ts";

// Client commits and clears for providers with one "end the turn now" frame (AssemblyAI's
// ForceEndpoint, Deepgram Flux's ForceEndTurn): the frame goes out once per turn, ends it for
// every command sent while it is on its way, and each command gets exactly one answer, in order.

export type TurnCommand = "commit" | "clear";

export class TurnEnds {
  /** Commands waiting for the end of the turn, oldest first. */
  readonly owed: TurnCommand[] = [];

  constructor(
    private readonly stream: JsonSocketStream<SttEvent>,
    private readonly frame: string,
  ) {}

  /** Whether the turn under way is being cleared (its text must not come out). */
  get clearing(): boolean {
    return this.owed[0] === "clear";
  }

  /** A commit or clear: with no turn open there is nothing to end, and it is answered at once. */
  request(kind: TurnCommand, turnOpen: boolean, atMs: number): void {
    if (!turnOpen) return this.acknowledge(kind, atMs);
    this.owed.push(kind);
    if (this.owed.length > 1) return; // the frame already sent ends this turn for both
    this.stream.send(this.frame);
    this.stream.expectAnswer();
  }

  /** The turn ended: the command it answers, if any (the caller emits that answer with the turn's events). */
  answering(ending: boolean): TurnCommand | undefined {
    const kind = this.owed.shift();
    if (kind && !ending) this.stream.answered();
    return kind;
  }

  /** The commands still owed found no turn left to end: answered at `atMs`. */
  answerRest(atMs: number): void {
    for (let kind = this.owed.shift(); kind; kind = this.owed.shift()) this.acknowledge(kind, atMs);
  }

  acknowledge(kind: TurnCommand, atMs: number): void {
    this.stream.push(kind === "clear" ? { type: "cleared", atMs } : { type: "committed", origin: "client", atMs });
  }
}

/**
 * The SttStream of such an adapter: audio relayed by the adapter, commits and clears through
 * `ends`, one frame to end; `flush` sends audio the adapter holds back before any of those.
 */
export function turnEndingStream(
  stream: JsonSocketStream<SttEvent>,
  ends: TurnEnds,
  adapter: { endFrame: string; turnOpen(): boolean; audioMs(): number; send(audio: Uint8Array): void; flush?(): void; ending(): void },
): SttStream {
  const request = (kind: TurnCommand) => {
    adapter.flush?.();
    ends.request(kind, adapter.turnOpen(), adapter.audioMs());
  };
  return {
    send: (audio) => adapter.send(audio),
    commit: () => request("commit"),
    clear: () => request("clear"),
    end: () => {
      adapter.flush?.();
      adapter.ending();
      stream.send(adapter.endFrame);
      stream.expectAnswer();
    },
    cancel: () => stream.cancel(),
    get bufferedAmount() {
      return stream.bufferedAmount;
    },
    [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
  };
}
