import { audio, type ChannelPart, command, numberedEvent } from "./channel.ts";
import { array, boolean, integer, nullable, object, oneOfValues, string } from "./schema.ts";

// `/v1/stt` with `event_format=normalized` (docs/stt-websocket.md; events made in
// surfaces/native/stt-wire.ts). With `event_format=provider` the provider's own frames pass both
// ways instead, and none of these events is sent.

const TURN = { turn_id: string("The same across a turn's signals, transcripts and commit") };
const INPUT_CONFIG = object({
  audio_format: string(),
  sample_rate: integer(),
  channels: integer(),
  language: nullable(string()),
  interim_results: boolean("The resolved value"),
  commit_strategy: oneOfValues(["auto", "manual"]),
  turn_detection: oneOfValues(["acoustic", "semantic"]),
  turn_detector: oneOfValues(["provider", "router_vad"]),
  event_format: oneOfValues(["normalized"]),
});
const AT = { audio_ms: integer("Position in the caller's audio") };

export const sttChannel: ChannelPart = {
  id: "stt",
  address: "/v1/stt",
  title: "Streaming speech to text",
  description:
    "Audio in as binary frames, forwarded unchanged; normalized `stt.*` events out, each with a stable `event_id` and a gapless `seq`. Ends with `stt.session.ended` and close 1000 `stt_complete`; an unreadable text frame closes 1003 `invalid_stt_frame`, a bad key 4401, a disabled account or excluded providers 4403, an empty balance or a spent budget 4402 (`insufficient_balance`, `budget_exceeded`), an idle socket 4408, a provider failure 1011, an embedded recognizer at capacity 1013 `provider_overloaded`, every provider gone down since the handshake 1013 `provider_unavailable`. With `event_format=provider` the provider's own protocol passes both ways instead.",
  receives: [
    audio("audio", "Caller audio in `audio_format`"),
    command("stt.audio.commit", "End the turn now (with `commit_strategy=manual`, the only way it ends)"),
    command("stt.audio.clear", "Drop the turn's audio so far"),
    command("stt.session.close", "No more audio: the last transcripts, then the end"),
  ],
  sends: [
    numberedEvent("stt.session.started", "First: the provider accepted the session", {
      session_id: string(),
      provider: string(),
      model: string(),
      input_config: INPUT_CONFIG,
    }),
    numberedEvent(
      "stt.provider.switched",
      "The provider failed mid-session and the next candidate took over: it was given the audio from `audio_ms` again, and transcripts go on from there (none lost or repeated)",
      {
        provider: string("The provider that now serves"),
        model: string(),
        previous_provider: string("The provider that failed"),
        reason: string("Why it was given up"),
        audio_ms: integer("Where the replay starts in the caller's audio: the end of the last final transcript, commit or clear"),
        input_config: INPUT_CONFIG,
      },
    ),
    numberedEvent("stt.signal", "A speech or turn decision, the provider's or the router VAD's", {
      origin: oneOfValues(["provider", "router"]),
      signal: oneOfValues(["started", "end", "eager_end", "resumed"]),
      turn_scope: oneOfValues(["utterance", "turn"]),
      basis: array(oneOfValues(["vad", "provider"])),
      ...TURN,
      ...AT,
    }),
    ...(["interim", "final"] as const).map((kind) =>
      numberedEvent(`stt.transcript.${kind}`, kind === "final" ? "A transcript that will not change" : "A transcript so far, which may change", {
        ...TURN,
        text: string(),
        audio_start_ms: integer(),
        audio_end_ms: integer(),
      }),
    ),
    numberedEvent("stt.audio.committed", "The turn's audio was committed (by the client, the router VAD or the provider)", { ...TURN, origin: oneOfValues(["client", "router", "provider"]), ...AT }),
    numberedEvent("stt.audio.cleared", "The turn's audio was dropped, after `stt.audio.clear`", { ...TURN, ...AT }),
    numberedEvent("stt.error", "Before an error close", { code: string("The router's error code"), message: string() }),
    numberedEvent(
      "stt.session.ended",
      "Last, before the close 1000, once usage is settled",
      { session_id: string(), audio_ms: integer(), billed_seconds: integer() },
      { provider: string(), model: string() },
    ),
  ],
};
