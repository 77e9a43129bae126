import type { ServerWebSocket } from "bun";

/** A server socket's network writes, counted where they happen: sends alone, and corks (each one write, whatever it sends). */
export interface Writes {
  alone: number;
  corked: number;
}

/** Wraps `raw`'s `send` and `cork` so that its writes are counted in what this returns. */
export function countWrites<T>(raw: ServerWebSocket<T>): Writes {
  const writes = { alone: 0, corked: 0 };
  const send = raw.send.bind(raw);
  const cork = raw.cork.bind(raw);
  let inCork = false;
  raw.send = ((frame: string | Uint8Array) => {
    if (!inCork) writes.alone++;
    return send(frame);
  }) as typeof raw.send;
  raw.cork = ((fn: (ws: ServerWebSocket<T>) => unknown) => {
    writes.corked++;
    inCork = true;
    try {
      return cork(fn);
    } finally {
      inCork = false;
    }
  }) as typeof raw.cork;
  return writes;
}
