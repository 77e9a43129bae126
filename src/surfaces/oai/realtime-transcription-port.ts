import { ApiError } from "../../errors.ts";
import type { SttPort, SttSessionEvent } from "../../sessions/stt-events.ts";
import type { OaiEvents } from "./realtime-events.ts";

// An STT session as OpenAI's Realtime API frames a transcription session (upstreams sheet 2c;
// docs/compat-oai.md): each turn is an input item, with speech started/stopped from the router's
// or the provider's turn detector, a transcription delta per final segment, and the whole
// transcript when the turn is committed. Deltas only ever add (clients concatenate them), so
// interim transcripts, which a recognizer may still revise, are not sent.

export function oaiTranscriptionPort(events: OaiEvents): SttPort {
  const itemOf = (turnId: string) => `item_${turnId}`;
  /** Each open turn's final segments so far. */
  const turns = new Map<string, string>();
  let lastItem: string | null = null;

  const event = (ev: SttSessionEvent): void => {
    switch (ev.type) {
      case "signal":
        if (ev.signal === "started") return events.send({ type: "input_audio_buffer.speech_started", audio_start_ms: ev.atMs, item_id: itemOf(ev.turnId) });
        if (ev.signal === "end") return events.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: ev.atMs, item_id: itemOf(ev.turnId) });
        return;
      case "transcript": {
        const text = ev.text.trim();
        if (!ev.final || !text) return;
        const before = turns.get(ev.turnId) ?? "";
        turns.set(ev.turnId, before ? `${before} ${text}` : text);
        return events.send({ type: "conversation.item.input_audio_transcription.delta", item_id: itemOf(ev.turnId), content_index: 0, delta: before ? ` ${text}` : text });
      }
      case "committed": {
        const item = itemOf(ev.turnId);
        const transcript = turns.get(ev.turnId) ?? "";
        turns.delete(ev.turnId);
        events.send({ type: "input_audio_buffer.committed", item_id: item, previous_item_id: lastItem });
        lastItem = item;
        return events.send({ type: "conversation.item.input_audio_transcription.completed", item_id: item, content_index: 0, transcript });
      }
      case "cleared":
        turns.clear();
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
