import { ApiError } from "../../errors.ts";
import type { SttPort, SttSessionEvent } from "../../sessions/stt-events.ts";
import type { OaiEvents } from "./realtime-events.ts";
import { Items } from "./realtime-items.ts";
import { HeardTurns } from "./realtime-turns.ts";

// An STT session as OpenAI's Realtime API frames a transcription session (upstreams sheet 2c;
// docs/compat-oai.md): each turn is a user item, with speech started/stopped from the router's
// or the provider's turn detector, and its transcription once the turn is committed, in OpenAI's
// order (realtime-turns.ts).

export function oaiTranscriptionPort(events: OaiEvents): SttPort {
  const turns = new HeardTurns(events, new Items(events));

  const event = (ev: SttSessionEvent): void => {
    switch (ev.type) {
      case "signal":
        if (ev.signal === "started" || ev.signal === "end") turns.speech(ev.turnId, ev.signal === "started" ? "started" : "stopped", ev.atMs);
        return;
      case "transcript":
        if (ev.final) turns.heard(ev.turnId, ev.text);
        return;
      case "committed":
        return turns.committed(ev.turnId);
      case "cleared":
        turns.cleared();
        return events.send({ type: "input_audio_buffer.cleared" });
      case "error":
        return events.error(new ApiError(ev.code, ev.message));
      case "started": // session.updated went out when the settings were taken
      case "switched": // another provider took over mid-session: OpenAI's protocol has no such event, and the transcripts go on
      case "ended":
        return;
    }
  };
  return { event, close: (code, reason) => events.port.close(code, reason) };
}
