import type { ServerWebSocket } from "bun";

/**
 * A provider that drops a stream on which nothing arrives, as a fake plays it: once the client
 * sent nothing for `ms`, `drop` runs (the fake's close, as its provider's). Call `heard()` on each
 * client frame. The fakes share the router's event loop: when the time is up, the frames already
 * on their way are read first (the verdict waits one more turn of the loop), so a loop that was
 * busy does not pass for a quiet client.
 */
export function closeWhenIdle(ws: ServerWebSocket<unknown>, ms: number, drop: () => void): { heard(): void } {
  let last = performance.now();
  // Frames already received are read at the next turn of the loop, before a timer set now runs.
  const check = () =>
    setTimeout(() => {
      if (ws.readyState !== 1) return;
      const quiet = performance.now() - last;
      if (quiet >= ms) drop();
      else setTimeout(check, ms - quiet).unref(); // a closed socket's timer keeps nothing running
    }, 0);
  setTimeout(check, ms).unref();
  return {
    heard: () => {
      last = performance.now();
    },
  };
}
