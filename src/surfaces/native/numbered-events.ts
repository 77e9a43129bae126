import type { ErrorCode } from "../../errors.ts";

/** A wire event before it is numbered: its `type` and its fields. */
export type WireEvent = Record<string, unknown> & { type: string };

/** The error event `/v1/stt` and `/v1/realtime` send before an error close: `<socket>.error` with the code and message. */
export function errorEvent(socket: "stt" | "realtime", { code, message }: { code: ErrorCode; message: string }): WireEvent {
  return { type: `${socket}.error`, code, message };
}

/**
 * `/v1/stt` and `/v1/realtime` number every event of a session: a gapless `seq` from 1 and a stable
 * `event_id` (`<session_id>.<seq>`), right after `type`. One numbering per session.
 */
export function eventNumbering(sessionId: string): (event: WireEvent) => WireEvent {
  let seq = 0;
  return ({ type, ...fields }) => {
    seq++;
    return { type, event_id: `${sessionId}.${seq}`, seq, ...fields };
  };
}
