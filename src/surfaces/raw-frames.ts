import type { ServerWebSocket } from "bun";

/**
 * Hands the socket's client frames to `onFrame` as Bun delivers them (text as a string, binary as
 * a Buffer), ahead of Elysia's per-message handler, which wraps the socket anew and tries to parse
 * JSON for every frame: that cost a session's audio path more than the relay itself.
 */
export function takeFrames(raw: ServerWebSocket<unknown>, onFrame: (frame: string | Uint8Array) => void): void {
  (raw.data as { message: (ws: unknown, frame: string | Uint8Array) => void }).message = (_ws, frame) => onFrame(frame);
}

/** A text frame's JSON, or undefined when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
