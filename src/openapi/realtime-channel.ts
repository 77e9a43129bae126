import { OUTPUT_FORMATS } from "../realtime/output-formats.ts";
import { audio, type ChannelPart, command, numberedEvent } from "./channel.ts";
import { boolean, integer, object, oneOfValues, string } from "./schema.ts";

// `/v1/realtime` (docs/realtime.md#the-v1realtime-socket; events made in surfaces/native/realtime-wire.ts).

const TURN = { turn_id: string("The recognizer's turn (`turn_1`, …)") };
const RESPONSE = { response_id: string("`resp_1`, `resp_2`, …") };

export const realtimeChannel: ChannelPart = {
  id: "realtime",
  address: "/v1/realtime",
  title: "A realtime profile as a live conversation",
  description:
    "Caller audio in as binary frames (the profile's `pipeline.stt.input.audio_format`), accepted from the moment the socket opens; the answer's audio out as binary frames (`pipeline.tts.format`) with `realtime.*` events, each with a stable `event_id` and a gapless `seq`. Ends with `realtime.session.ended` and close 1000 (`conversation_complete`, or the application's ending); another text frame closes 1003 `invalid_realtime_frame`; a bad credential 4401, a disabled account 4403; an unreachable application, or one that closes in the middle of an answer, 1011; a conversation idle for `REALTIME_IDLE_TIMEOUT_MS` 4408.",
  receives: [
    audio("audio", "Caller audio"),
    command("realtime.input_audio.commit", "The caller's turn ends now (push-to-talk)"),
    command("realtime.session.close", "End the conversation: what is being made is finished first"),
  ],
  sends: [
    audio("audio", "The answer's audio: drop what is held when told `realtime.response.interrupted`"),
    numberedEvent("realtime.session.started", "The recognizer and the application are both connected", {
      session_id: string("`rt_…`"),
      profile_id: string(),
      input_audio_format: string(),
      output_audio_format: oneOfValues(Object.keys(OUTPUT_FORMATS)),
      stt: object({ provider: string(), model: string() }),
    }),
    ...(["started", "stopped"] as const).map((state) =>
      numberedEvent(`realtime.input_audio.speech_${state}`, `The caller ${state === "started" ? "started" : "stopped"} speaking`, { ...TURN, audio_ms: integer() }),
    ),
    ...(["interim", "final"] as const).map((kind) => numberedEvent(`realtime.transcript.${kind}`, `The caller's words as recognized (${kind})`, { ...TURN, text: string() })),
    numberedEvent("realtime.turn.ended", "The caller's turn is over: its text went to the application", { ...TURN, text: string() }),
    numberedEvent("realtime.response.text", "A token of the application's answer; an empty token with `last: true` when the router closed the answer itself", {
      ...RESPONSE,
      token: string(),
      last: boolean(),
    }),
    numberedEvent(
      "realtime.response.audio.started",
      "The answer's first audio follows",
      { ...RESPONSE, provider: string(), model: string() },
      { voice: string("When a fallback model of the profile (`pipeline.tts.fallbacks`) speaks the answer: the voice it speaks in") },
    ),
    numberedEvent("realtime.response.audio.done", "All of the answer's audio has been sent", { ...RESPONSE, characters: integer(), audio_ms: integer() }),
    numberedEvent("realtime.response.interrupted", "The caller talked over the answer: drop its audio still held", {
      ...RESPONSE,
      spoken_text: string("What the caller had time to hear"),
      audio_ms: integer(),
    }),
    numberedEvent(
      "realtime.provider.switched",
      "A stage's provider failed mid-call after it had served, and the next candidate took over: the recognizer goes on hearing the caller (`stt`), the answer goes on from the start of the sentence it broke off in (`tts`)",
      {
        stage: oneOfValues(["stt", "tts"]),
        provider: string("The provider that now serves"),
        model: string(),
        previous_provider: string("The provider that failed"),
        reason: string("Why it was given up"),
      },
      { response_id: string("`tts`: the answer whose speech switched"), voice: string("`tts`: the voice the answer goes on in, when one is named") },
    ),
    numberedEvent(
      "realtime.language.switched",
      "The application's `language` message took effect: the caller is now heard in `language` (`stt`), or later answers are spoken in it (`tts`)",
      { stage: oneOfValues(["stt", "tts"]), language: string("As the application named it") },
      { voice: string("`tts`: the voice that speaks it") },
    ),
    numberedEvent("realtime.error", "Before an error close", { code: string("The router's error code"), message: string() }),
    numberedEvent(
      "realtime.session.ended",
      "Before the normal close",
      {
        session_id: string(),
        reason: oneOfValues(["client_closed", "application_ended", "application_closed", "balance_exhausted", "error"]),
        usage: object({ stt_seconds: integer(), tts_characters: integer() }),
      },
      { handoff_data: string("The application's `end`") },
    ),
  ],
};
