import { ApiError } from "../../errors.ts";
import type { SttPort, SttSessionEvent } from "../../sessions/stt-events.ts";
import type { OaiEvents } from "./realtime-events.ts";

// An STT session as OpenAI's Realtime API frames a transcription session (upstreams sheet 2c;
// docs/compat-oai.md): each turn is an input item, with speech started/stopped from the router's
// or the provider's turn detector, transcription deltas as the words come, and the whole
// transcript when the turn is committed.

/** What a turn's transcript has said: the finals so far, and what deltas have already carried. */
interface TurnText {
  finals: string;
  sent: string;
}

const joined = (a: string, b: string) => (a && b ? `${a} ${b}` : a || b);

export function oaiTranscriptionPort(events: OaiEvents): SttPort {
  const itemOf = (turnId: string) => `item_${turnId}`;
  const turns = new Map<string, TurnText>();
  let lastItem: string | null = null;
  const turn = (turnId: string) => {
    let t = turns.get(turnId);
    if (!t) turns.set(turnId, (t = { finals: "", sent: "" }));
    return t;
  };
  /** Deltas only ever add: a revision that is no extension of what was sent waits for the completed transcript. */
  const say = (turnId: string, t: TurnText, text: string) => {
    if (!text.startsWith(t.sent) || text === t.sent) return;
    events.send({ type: "conversation.item.input_audio_transcription.delta", item_id: itemOf(turnId), content_index: 0, delta: text.slice(t.sent.length) });
    t.sent = text;
  };

  const event = (ev: SttSessionEvent): void => {
    switch (ev.type) {
      case "signal":
        if (ev.signal === "started") return events.send({ type: "input_audio_buffer.speech_started", audio_start_ms: ev.atMs, item_id: itemOf(ev.turnId) });
        if (ev.signal === "end") return events.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: ev.atMs, item_id: itemOf(ev.turnId) });
        return;
      case "transcript": {
        const t = turn(ev.turnId);
        const text = ev.text.trim();
        if (ev.final) t.finals = joined(t.finals, text);
        return say(ev.turnId, t, ev.final ? t.finals : joined(t.finals, text));
      }
      case "committed": {
        const item = itemOf(ev.turnId);
        const transcript = turns.get(ev.turnId)?.finals ?? "";
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
      case "ended":
        return;
    }
  };
  return { event, close: (code, reason) => events.port.close(code, reason) };
}
