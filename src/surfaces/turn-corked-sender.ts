import type { ServerWebSocket } from "bun";

const OPEN = 1;

type Frame = string | Uint8Array;

/**
 * Frames relayed to a client socket as they are, each its own WebSocket message, sharing the
 * network writes of one loop turn. uWS corks a socket's sends only inside that socket's own
 * callbacks; frames from an upstream arrive outside them and would cost one write each. Here the
 * first frame of a turn goes out at once (a real-time stream waits for nothing); those that follow
 * it in the same turn (an upstream's burst, read from the network in one go) go out together,
 * corked, when the turn ends. Nothing is joined, split or reordered; a close sends them first.
 */
export class TurnCorkedSender {
  private waiting: Frame[] = [];
  /** Set while a turn has sent its first frame: the turn's end is scheduled. */
  private turnEnd: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly raw: ServerWebSocket<unknown>) {}

  send(frame: Frame): void {
    if (this.turnEnd) {
      this.waiting.push(frame);
      return;
    }
    if (this.raw.readyState !== OPEN) return;
    this.raw.send(frame);
    this.turnEnd = setImmediate(() => this.flush());
  }

  close(code: number, reason: string): void {
    this.flush();
    if (this.raw.readyState === OPEN) this.raw.close(code, reason);
  }

  private flush(): void {
    clearImmediate(this.turnEnd);
    this.turnEnd = undefined;
    if (!this.waiting.length) return;
    const frames = this.waiting;
    this.waiting = [];
    if (this.raw.readyState !== OPEN) return;
    this.raw.cork((ws) => {
      for (const frame of frames) ws.send(frame);
    });
  }
}
