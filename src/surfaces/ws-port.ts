import type { ServerWebSocket } from "bun";

const OPEN = 1;

/**
 * A Bun WebSocket as a session port: JSON events as text frames, audio as binary frames passed
 * through without copying (or as text frames, for surfaces that wrap audio in JSON), and
 * backpressure honoured: when Bun reports the send queued (-1) or dropped (0), the next audio
 * waits for `drain` (a dropped frame is sent again then).
 */
export class WsPort {
  private drained: (() => void) | undefined;

  constructor(private readonly raw: ServerWebSocket<unknown>) {}

  sendEvent(event: Record<string, unknown>): void {
    if (this.raw.readyState === OPEN) this.raw.send(JSON.stringify(event));
  }

  /** Synchronous while the socket keeps up; a promise only when the client is behind. */
  sendAudio(chunk: Uint8Array | string): void | Promise<void> {
    if (this.raw.readyState !== OPEN) return;
    const sent = this.raw.send(chunk);
    if (sent > 0) return;
    return this.afterDrain(sent === 0 ? chunk : undefined);
  }

  /** Waits for `drain`; a frame Bun dropped (0) is sent again then, one it queued (-1) is not. */
  private async afterDrain(dropped: Uint8Array | string | undefined): Promise<void> {
    await new Promise<void>((resolve) => (this.drained = resolve));
    if (dropped) await this.sendAudio(dropped);
  }

  /** Bun's `drain` callback for this socket. */
  drain(): void {
    const resolve = this.drained;
    this.drained = undefined;
    resolve?.();
  }

  /** The frames `fn` sends go out in one write (uWS corks only inside its own callbacks; audio from an upstream arrives outside them). */
  together(fn: () => void): void {
    if (this.raw.readyState === OPEN) this.raw.cork(fn);
    else fn();
  }

  close(code: number, reason: string): void {
    if (this.raw.readyState === OPEN) this.raw.close(code, reason);
    this.drain();
  }
}
