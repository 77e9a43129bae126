import type { TtsStream } from "../providers/types.ts";
import type { TtsCommand } from "./tts-events.ts";
import type { TtsFailover } from "./tts-failover.ts";
import type { TextTally } from "./tts-text-tally.ts";

/**
 * A TTS session's admitted commands on their way to its provider's stream: kept while no provider
 * is ready, text held for a flush or close when auto_flush is off, and each recorded for a
 * failover's replay as it is given.
 */
export class TtsCommandsIn {
  /** Admitted commands waiting for a provider. */
  private pending: TtsCommand[] = [];
  /** With auto_flush off, text waits here for a flush or close. */
  private held = "";
  /** The client's close was admitted: after it, the stream may end. */
  closeAccepted = false;

  constructor(
    private readonly text: TextTally,
    private readonly failover: TtsFailover,
    private readonly autoFlush: boolean,
  ) {}

  /** An admitted command: given to `stream` now, or kept until one is ready (undefined while the session starts). */
  accept(cmd: TtsCommand, stream: TtsStream | undefined): void {
    if (cmd.type === "close") this.closeAccepted = true;
    if (stream) this.apply(cmd, stream);
    else this.pending.push(cmd);
  }

  /** A provider is ready: the commands kept for it go to its stream, in order. */
  giveKept(stream: TtsStream): void {
    const queued = this.pending;
    this.pending = [];
    for (const cmd of queued) this.apply(cmd, stream);
  }

  /** A failover: the next candidate is given `commands` first (held text is among them), then what was kept. */
  replay(commands: TtsCommand[]): void {
    this.pending = [...commands, ...this.pending];
    this.held = "";
  }

  private apply(cmd: TtsCommand, stream: TtsStream): void {
    this.failover.record(cmd);
    if (cmd.type === "text") {
      if (!this.autoFlush) {
        this.held += cmd.text;
        return;
      }
      this.write(stream, cmd.text);
      return;
    }
    if (this.held) {
      this.write(stream, this.held);
      this.held = "";
    }
    if (cmd.type === "flush") {
      this.text.flushAsked();
      stream.flush();
    } else {
      stream.end();
    }
  }

  private write(stream: TtsStream, text: string): void {
    this.text.wrote(text);
    stream.write(text);
  }
}
