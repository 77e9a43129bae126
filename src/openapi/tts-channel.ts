import { audio, type ChannelPart, command, event } from "./channel.ts";
import { array, integer, number, object, oneOfValues, string } from "./schema.ts";

// `/v1/tts` (docs/tts-websocket.md; frames made in surfaces/native/tts-wire.ts and read in tts-frames.ts).

const TIMES = object({ characters: array(string()), start_times: array(number("Seconds from the session's first audio")), end_times: array(number()) });

export const ttsChannel: ChannelPart = {
  id: "tts",
  address: "/v1/tts",
  title: "Streaming text to speech",
  description:
    "Text in as JSON commands, audio out as binary frames (16-bit little-endian PCM, or MP3 with `format=mp3`) with JSON `service.*` events. Ends with `service.tts_session_ended` and close 1000 `tts_complete`; a malformed frame closes 1003 `invalid_tts_frame`, a text over 2000 characters 1009, a bad key 4401, a disabled account or excluded providers 4403, an empty balance or a spent budget 4402 (`insufficient_balance`, `budget_exceeded`), an idle socket 4408, a provider failure 1011 `upstream_error`, every provider gone down since the handshake 1013 `provider_unavailable`.",
  receives: [
    command("text", "Text to speak: at most 2000 characters a frame", { text: string(undefined, { maxLength: 2000 }) }, { text: "Hello there." }),
    command("flush", "Speak what was sent so far; answered `service.tts_flushed`"),
    command("close", "No more text: speak the rest, then end"),
  ],
  sends: [
    audio("audio", "The audio, as it is produced"),
    event(
      "service.tts_provider_status",
      "A provider being connected, connected, or failed (a fallback follows when one is allowed, also after audio went out: the `connected` one then serves the rest). The session's first attempt on the model it named sends only `failed`, if it fails: `service.tts_session_ready` tells that it connected",
      {
        provider: string(),
        model: string(),
        status: oneOfValues(["connecting", "connected", "failed"]),
      },
      {
        voice: string("With `connected`, the voice the provider speaks in (after a failover, the one now serving); every event of a fallback model's provider (`fallbacks`) names it"),
        reason: string(),
      },
    ),
    event("service.tts_session_ready", "A provider accepted the session (once, across fallbacks)", { session_id: string() }),
    event("service.tts_audio_started", "Before the first audio: its shape", {
      provider: string(),
      model: string(),
      encoding: oneOfValues(["pcm_s16le", "mp3"]),
      sample_rate: integer(),
      channels: integer(),
    }),
    event("service.tts_flushed", "The audio of the text before a flush has all been sent"),
    event("service.tts_alignment", "With `alignment=true`: when characters of the text are spoken", {
      alignment: TIMES,
      normalized_alignment: { ...TIMES, description: "The text as the provider normalized it, where it says so; else the same as `alignment`" },
    }),
    event("service.tts_error", "Before an error close", { code: string("The router's error code"), message: string() }, { param: string() }),
    event(
      "service.tts_session_ended",
      "Before the close 1000, once usage is settled",
      { session_id: string(), characters: integer("Billed characters"), audio_bytes: integer() },
      { provider: string(), model: string() },
    ),
  ],
};
