import { AUDIO_FORMATS } from "../planning/stt-request.ts";
import type { DocumentPart } from "./document-types.ts";
import { BUDGET_EXCEEDED, failures, ROUTED_KEY_FAILURES } from "./error-envelopes.ts";
import { answer, binary, CACHE_QUERY, fallbacksQuery, fallbacksText, json, PREFERENCE_QUERY, query, repeatedQuery } from "./operation.ts";
import { array, file, integer, number, object, oneOfValues, ref, string } from "./schema.ts";
import { BEARER, SOCKET_KEY } from "./security.ts";
import { handshake, PROVIDER_OPTIONS } from "./websocket.ts";

// The native speech channels: `/v1/tts` and `/v1/stt` (WebSocket) and file transcription.

const ROUTING_REFUSALS = "`model_required`, `model_not_found`, `no_matching_provider`";
const BILLING_REFUSALS = {
  402: "`insufficient_balance`: the key is valid and its account cannot pay for any allowed provider",
  422: "`model_not_priced`: the model has no price on any allowed provider",
  426: "`websocket_upgrade_required`: a plain GET without the upgrade",
  429: BUDGET_EXCEEDED,
};

const TTS_QUERY = [
  query("model", "A bare model id or `{author}/{modelName}`", string(), true),
  query("provider", "Pins a provider"),
  query("voice", "The voice, verbatim; required when the routed provider requires one (never substituted)"),
  query("format", "Output audio: 16-bit little-endian PCM, or MP3 where the provider makes it", oneOfValues(["pcm", "mp3"])),
  query("auto_flush", "Any value but `false` lets the router cut text into utterances itself", string(undefined, { default: "true" })),
  query("alignment", "`true`: `service.tts_alignment` events time the text's characters", oneOfValues(["true", "false"])),
  CACHE_QUERY,
  query("pronunciation_dictionaries", "The tenant's pronunciation dictionaries, `id` or `id:version_id`, comma-separated, at most 3 (docs/pronunciation.md)"),
  ...PREFERENCE_QUERY,
  fallbacksQuery("tts"),
  PROVIDER_OPTIONS,
];

const DURATIONS = ["silence_duration_ms", "min_speech_duration_ms", "min_silence_duration_ms", "turn_timeout_ms"];
const THRESHOLDS = ["speech_threshold", "turn_threshold", "eager_end_threshold"];
const BOOLEANS = ["interim_results", "include_timestamps", "include_language_detection", "diarization", "formatting", "include_filler_words"];

const STT_QUERY = [
  query("model", "The STT model", string(), true),
  query("audio_format", "What the binary frames hold; forwarded unchanged", oneOfValues(AUDIO_FORMATS), true),
  query("provider", "Pins a provider"),
  query("language", "The expected language"),
  query("channels", "Interleaved channels", integer(undefined, { minimum: 1, maximum: 8, default: 1 })),
  query("commit_strategy", "`manual`: turns end on `stt.audio.commit`", oneOfValues(["auto", "manual"])),
  query("turn_detection", "Which turn detector decides", oneOfValues(["auto", "acoustic", "semantic"])),
  ...DURATIONS.map((name) => query(name, "Milliseconds, where the model family takes it", number(undefined, { minimum: 0 }))),
  ...THRESHOLDS.map((name) => query(name, "0 to 1, where the model family takes it", number(undefined, { minimum: 0, maximum: 1 }))),
  ...BOOLEANS.map((name) => query(name, "Where the model family takes it", oneOfValues(["true", "false"]))),
  repeatedQuery("keyterms", "Words to listen for; repeatable"),
  query("context", "Text that helps recognition, where the model family takes it"),
  query("event_format", "`provider`: the provider's own protocol relayed both ways", oneOfValues(["normalized", "provider"])),
  ...PREFERENCE_QUERY,
  fallbacksQuery("stt"),
  PROVIDER_OPTIONS,
];

const TRANSCRIPT = object({
  id: string(),
  text: string(),
  segments: array(object({ text: string(), start_ms: number(), end_ms: number() })),
  duration_seconds: number("Measured from the audio's own frames"),
  billed_seconds: integer("The duration rounded up to whole seconds"),
  provider: string(),
  model: string("The canonical model"),
});

const FILE_FIELDS = {
  model: string("A synchronous STT model"),
  language: string(),
  provider: string("Pins a provider"),
  provider_order: string(),
  provider_only: string(),
  provider_ignore: string(),
  allow_fallbacks: oneOfValues(["true", "false"]),
  fallbacks: fallbacksText("stt"),
};

export const speechPaths: DocumentPart = {
  schemas: { FileTranscript: TRANSCRIPT },
  paths: {
    "/v1/tts": {
      get: handshake({
        operationId: "openTtsSocket",
        summary: "Streaming text to speech (WebSocket)",
        description:
          "Text in as JSON commands (`text`, `flush`, `close`), audio out as binary frames with JSON `service.*` events; metered per character, with fallback to the next provider before the first audio. Key and provider permission are checked after the upgrade: close 4401 / 4403.",
        tags: ["speech"],
        security: SOCKET_KEY,
        parameters: TTS_QUERY,
        surface: "native",
        channel: "/v1/tts",
        docs: "docs/tts-websocket.md",
        refusals: { 400: `${ROUTING_REFUSALS}, \`voice_required\`, \`invalid_output_format\`, \`invalid_request\` (a bad \`format\` or \`alignment\`, a voice no candidate has)`, ...BILLING_REFUSALS },
      }),
    },
    "/v1/stt": {
      get: handshake({
        operationId: "openSttSocket",
        summary: "Streaming speech to text (WebSocket)",
        description:
          "Audio in as binary frames (with `stt.audio.commit`, `stt.audio.clear`, `stt.session.close` text frames), normalized `stt.*` events out with stable ids and gapless sequence numbers; or the provider's own protocol with `event_format=provider`. Metered per second.",
        tags: ["speech"],
        security: SOCKET_KEY,
        parameters: STT_QUERY,
        surface: "native",
        channel: "/v1/stt",
        docs: "docs/stt-websocket.md",
        refusals: {
          400: `${ROUTING_REFUSALS}, \`invalid_request\` (a bad or unknown parameter), \`unsupported_stt_option\`, \`conflicting_audio_format\``,
          ...BILLING_REFUSALS,
          503: "`provider_overloaded`: every candidate is at capacity (`Retry-After`)",
        },
      }),
    },
    "/v1/stt/transcriptions": {
      post: {
        operationId: "transcribeFile",
        summary: "Transcribe an audio file",
        description:
          "The file as `multipart/form-data` (`file` and the fields), or as the raw body with its `Content-Type` and the fields in the query. Billed by the duration measured from the audio's own frames, rounded up to the second (docs/stt-files.md).",
        tags: ["speech"],
        security: BEARER,
        parameters: Object.entries(FILE_FIELDS).map(([name, schema]) => query(name, "With a raw body (a multipart body carries it as a field)", schema)),
        requestBody: {
          required: true,
          content: {
            "multipart/form-data": { schema: object({ file: file() }, FILE_FIELDS) },
            ...binary("audio/*"),
          },
        },
        responses: {
          200: answer("The transcript", json(ref("FileTranscript"))),
          ...failures("native", {
            400: `${ROUTING_REFUSALS}, \`invalid_request\`: no audio, multipart without \`file\`, an unknown parameter`,
            ...ROUTED_KEY_FAILURES,
            402: "`insufficient_balance`: the balance cannot pay for the whole file",
            429: BUDGET_EXCEEDED,
            413: "`payload_too_large`: over `MAX_AUDIO_UPLOAD_BYTES` (`limit_bytes`)",
            422: "`indeterminate_audio_duration`: the audio cannot be measured; `validation`: the recognizer cannot read it; `model_not_priced`",
            502: "`upstream_error`: the provider failed",
            503: "`provider_overloaded`: every candidate is at capacity; `provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After` for both)",
          }),
        },
      },
    },
  },
};
