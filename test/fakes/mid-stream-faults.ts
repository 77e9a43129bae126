import type { ServerWebSocket } from "bun";

// Faults a streaming STT fake plays in the middle of a session, once it has received so much audio
// (a provider failing after it took the session): set at runtime for the connections opened from
// then on, until cleared. Faults at the connection itself (a refusal, a 500) are the fake's own.

export interface MidStreamFault {
  /**
   * - `kill`: the socket is cut without a close frame (the network or the provider's process died);
   * - `hang`: from then on nothing is read or answered and nothing closes;
   * - `error`: the protocol's error event, then close 1011 (a protocol without one, as Deepgram
   *   Nova, which tells errors in its close: the close alone).
   */
  kind: "kill" | "hang" | "error";
  /** After this much audio: bytes, or seconds at the connection's declared rate. */
  afterBytes?: number;
  afterSeconds?: number;
}

/** The part of a fake socket this wraps. */
export interface FaultableSocket<W extends ServerWebSocket<unknown>> {
  open?(ws: W): void;
  message(ws: W, frame: string | Buffer): void;
}

/**
 * `socket` with `fault` played once the audio received would pass its mark (the frame that passes
 * it is not taken); `errorEvent` sends the protocol's error event. Without a fault, `socket` itself.
 */
export function withMidStreamFault<W extends ServerWebSocket<unknown>, S extends FaultableSocket<W>>(
  socket: S,
  fault: MidStreamFault | undefined,
  bytesPerSecond: number,
  errorEvent?: (ws: W) => void,
): S {
  if (!fault) return socket;
  const mark = fault.afterBytes ?? Math.round((fault.afterSeconds ?? 0) * bytesPerSecond);
  let received = 0;
  let failed = false;
  return {
    ...socket,
    message(ws: W, frame: string | Buffer) {
      if (failed) return;
      if (typeof frame !== "string") {
        if (received + frame.byteLength > mark) {
          failed = true;
          if (fault.kind === "kill") ws.terminate();
          else if (fault.kind === "error") {
            errorEvent?.(ws);
            ws.close(1011, "error");
          }
          return;
        }
        received += frame.byteLength;
      }
      socket.message(ws, frame);
    },
  };
}

/** Bytes a second of the audio a listen query declares (Deepgram's and AssemblyAI's spelling). */
export function declaredRate(query: URLSearchParams): number {
  const perSample = /mulaw/.test(query.get("encoding") ?? "") ? 1 : 2;
  return Number(query.get("sample_rate") ?? 16000) * perSample * Number(query.get("channels") ?? 1);
}
