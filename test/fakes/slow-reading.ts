import type { ServerWebSocket } from "bun";

// An upstream that reads slower than the router sends, as a provider busy or far away does: once
// the frames it has read run ahead of `bytesPerSecond`, its socket is paused until they are due.
// A paused socket is not read at all (Bun stops reading it), so the kernel's buffers fill and
// the sender's TCP window closes: the router meets the backpressure a slow provider gives.

/** Called with each frame read; pauses the socket while what was read runs ahead of the rate. */
export type ReadPace = (ws: ServerWebSocket<unknown>, frameBytes: number) => void;

export function slowReading(bytesPerSecond: number): ReadPace {
  const startedAt = performance.now();
  let readBytes = 0;
  return (ws, frameBytes) => {
    readBytes += frameBytes;
    const aheadMs = startedAt + (readBytes / bytesPerSecond) * 1000 - performance.now();
    if (aheadMs <= 0 || ws.isPaused) return;
    ws.pause();
    setTimeout(() => ws.resume(), aheadMs);
  };
}
