import type { DocumentPart, MediaType, Operation } from "./document-types.ts";
import { BUDGET_EXCEEDED, failures } from "./error-envelopes.ts";
import { answer, binary, CACHE_FIELD, CACHE_QUERY, fallbacks, fallbacksQuery, fallbacksText, formBody, json, jsonBody, pathParam, PREFERENCE_QUERY, query } from "./operation.ts";
import { array, boolean, constant, file, integer, map, nullable, number, object, oneOfValues, ref, string } from "./schema.ts";
import { EL_KEY } from "./security.ts";
import { handshake, PROVIDER_OPTIONS } from "./websocket.ts";

// `/el` speech (docs/compat-el.md): HTTP TTS, the `stream-input` socket, file transcription and
// the model list, for ElevenLabs' SDK with its base URL pointed here.

export const EL_KEY_FAILURES = {
  401: "`missing_api_key` (flat `{error}`, as ElevenLabs answers it) or `invalid_api_key`",
  403: "`tenant_disabled`",
};
const EL_ROUTED = {
  400: "`model_required`, `model_not_found`, `no_matching_provider`, `voice_required`, `invalid_output_format`, `invalid_request` naming the field (`param: voice`: a voice no candidate has; a bare model several providers serve)",
  ...EL_KEY_FAILURES,
  402: "`insufficient_balance`",
  403: "`tenant_disabled`, `provider_not_allowed`",
  422: "`model_not_priced`",
  429: BUDGET_EXCEEDED,
  502: "`upstream_error`: the provider failed",
  503: "`provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After`)",
};

const VOICE_ID = pathParam("voice_id", "Passed to the provider verbatim (`:` and `@` included); no default is substituted");
const OUTPUT_FORMAT = query("output_format", "`mp3_<rate>_<bitrate>`, `pcm_<rate>`, `wav_<rate>`, `ulaw_8000`, `alaw_8000`, `opus_48000_<bitrate>`", string(undefined, { default: "mp3_44100_128" }));

/** The audio as it is asked for, by its `Content-Type` (docs/compat-el.md#output-formats). */
const AUDIO: Record<string, MediaType> = {
  ...binary("audio/mpeg"),
  ...binary("audio/L16"),
  ...binary("audio/wav"),
  ...binary("audio/ogg"),
  ...binary("application/octet-stream"),
};

function speech(operationId: string, summary: string, description: string, content: Record<string, MediaType> = AUDIO): Operation {
  return {
    operationId,
    summary,
    description: `${description} Query keys that are not the endpoint's own are provider options.`,
    tags: ["ElevenLabs-compatible"],
    security: EL_KEY,
    parameters: [
      VOICE_ID,
      OUTPUT_FORMAT,
      query("optimize_streaming_latency", "A provider option"),
      query("enable_logging", "A provider option", oneOfValues(["true", "false"])),
      CACHE_QUERY,
      ...PREFERENCE_QUERY,
      PROVIDER_OPTIONS,
    ],
    requestBody: jsonBody(
      object(
        { text: string("At most 40,000 characters", { minLength: 1, maxLength: 40_000 }), model_id: string("`{provider}/{model}`, or a bare model one provider serves") },
        {
          voice_settings: object({}, { stability: number(), similarity_boost: number(), style: number(), speed: number(), use_speaker_boost: boolean() }),
          pronunciation_dictionary_locators: array(
            object({ pronunciation_dictionary_id: string() }, { version_id: string() }),
            "At most 3 of the tenant's pronunciation dictionaries (docs/pronunciation.md)",
          ),
          language_code: string(),
          apply_text_normalization: oneOfValues(["auto", "on", "off"]),
          seed: integer(),
          previous_text: string(),
          next_text: string(),
          fallbacks: fallbacks("tts"),
          cache: CACHE_FIELD,
          provider_options: map({ type: ["string", "number", "boolean"] }, "Provider options (not an ElevenLabs field)"),
        },
      ),
      "Other ElevenLabs fields are ignored",
    ),
    responses: {
      200: answer(content === AUDIO ? "The audio, in `output_format`" : "The audio with its characters' timings, in `output_format`", content),
      ...failures("el", { ...EL_ROUTED, 413: "`tts_text_too_large`: `text` over 40,000 characters; `payload_too_large`: a body over 1 MiB" }),
    },
  };
}

export const elSpeechPaths: DocumentPart = {
  schemas: {
    ElevenLabsAlignment: object(
      { characters: array(string()), character_start_times_seconds: array(number()), character_end_times_seconds: array(number()) },
      {},
      "Each character of the text, in order, with its start and end in seconds from the start of the whole audio",
    ),
    TimestampedAudio: object({
      audio_base64: string("The audio (or, streamed, its next piece), in `output_format`, base64"),
      alignment: nullable(ref("ElevenLabsAlignment")),
      normalized_alignment: nullable({ ...ref("ElevenLabsAlignment"), description: "The text as the provider normalized it; else the same as `alignment`" }),
    }),
    ElevenLabsModel: object(
      {
        model_id: string("`{provider}/{model}`, or an operator's alias"),
        name: string(),
        can_do_text_to_speech: constant(true),
        can_do_voice_conversion: boolean(),
        can_be_finetuned: boolean(),
        can_use_style: boolean(),
        can_use_speaker_boost: boolean(),
        serves_pro_voices: boolean(),
        token_cost_factor: number(),
        description: string(),
        requires_alpha_access: boolean(),
        languages: array(object({})),
      },
      { alias_of: string("An operator's alias only: the served model it stands for (docs/catalogue.md#operator-aliases)") },
    ),
  },
  paths: {
    "/el/v1/text-to-speech/{voice_id}/stream": {
      post: speech("elStreamSpeech", "ElevenLabs-compatible streaming TTS", "Streams the audio as it is produced; a failure after audio started can only cut the body short."),
    },
    "/el/v1/text-to-speech/{voice_id}": {
      post: speech("elSpeech", "ElevenLabs-compatible TTS (whole file)", "Answers once the audio is complete, so a failure midway is an error status."),
    },
    "/el/v1/text-to-speech/{voice_id}/with-timestamps": {
      post: speech(
        "elSpeechWithTimestamps",
        "ElevenLabs-compatible TTS with character timings (one JSON object)",
        "Answers once the audio is complete, with every character's time. Every `output_format` is made here from the providers' PCM.",
        json(ref("TimestampedAudio")),
      ),
    },
    "/el/v1/text-to-speech/{voice_id}/stream/with-timestamps": {
      post: speech(
        "elStreamSpeechWithTimestamps",
        "ElevenLabs-compatible streaming TTS with character timings (newline-delimited JSON)",
        "One JSON object per line as the audio is produced: the next piece of audio and the characters timed since the line before (`null`: none); a last line of no audio may carry the last timings.",
        { "application/json": { schema: ref("TimestampedAudio"), "x-json-lines": true } },
      ),
    },
    "/el/v1/text-to-speech/{voice_id}/stream-input": {
      get: handshake({
        operationId: "elOpenStreamInputSocket",
        summary: "ElevenLabs-compatible input-streaming TTS (WebSocket)",
        description: "JSON text frames both ways, audio base64 inside JSON. The key may also come in the init frame: a missing or invalid one closes 4401 when it arrives, a disabled account 4403.",
        tags: ["ElevenLabs-compatible"],
        security: [{ xiApiKey: [] }, { bearer: [] }, { elQueryKey: [] }, {}],
        parameters: [
          VOICE_ID,
          query("model_id", "`{provider}/{model}`, or a bare model one provider serves", string(), true),
          query("output_format", "As on the HTTP endpoints, but not `wav_*`", string(undefined, { default: "mp3_44100_128" })),
          query("sync_alignment", "`true`: every audio frame carries the timings of its characters", oneOfValues(["true", "false"])),
          CACHE_QUERY,
          query("inactivity_timeout", "Seconds without a client frame before the socket closes", integer(undefined, { minimum: 1, maximum: 180, default: 20 })),
          query("authorization", "A key (`Bearer <key>` or bare), for clients that can set no header"),
          ...PREFERENCE_QUERY,
          fallbacksQuery("tts"),
          PROVIDER_OPTIONS,
        ],
        surface: "el",
        channel: "/el/v1/text-to-speech/{voice_id}/stream-input",
        docs: "docs/compat-el.md",
        refusals: {
          400: "`model_required`, `invalid_output_format`, `model_not_found`, `no_matching_provider`, `voice_required`, `invalid_request` (a bad option, `inactivity_timeout` or `sync_alignment`; `param: voice`)",
          402: "`insufficient_balance`: the handshake's key is valid and its account cannot pay",
          422: "`model_not_priced`",
          426: "`websocket_upgrade_required`: a plain GET without the upgrade",
          429: `\`too_many_concurrent_requests\`: too many keyless sockets of this client address wait for their init frame (\`Retry-After\`); ${BUDGET_EXCEEDED}`,
        },
      }),
    },
    "/el/v1/speech-to-text": {
      post: {
        operationId: "elSpeechToText",
        summary: "ElevenLabs-compatible file transcription",
        description: "Word times are estimates spread over each segment. Scribe's other fields are accepted and ignored; unknown fields are 400.",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: PREFERENCE_QUERY,
        requestBody: formBody(object({ file: file(), model_id: string("A synchronous STT model") }, { language_code: string(), fallbacks: fallbacksText("stt") })),
        responses: {
          200: answer(
            "The transcript",
            json(
              object({
                language_code: string("The request's, or empty"),
                language_probability: number(),
                text: string(),
                words: array(object({ text: string(), start: number(), end: number(), type: oneOfValues(["word", "spacing"]), logprob: number() })),
                transcription_id: string(),
                audio_duration_secs: number(),
              }),
            ),
          ),
          ...failures("el", {
            ...EL_ROUTED,
            413: "`payload_too_large`: over `MAX_AUDIO_UPLOAD_BYTES`",
            422: "`indeterminate_audio_duration`, `validation`, `model_not_priced`",
            503: "`provider_overloaded`: every candidate is at capacity; `provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After` for both)",
          }),
        },
      },
    },
    "/el/v1/models": {
      get: {
        operationId: "elListModels",
        summary: "ElevenLabs-compatible model list",
        description: "Every TTS binding of the served catalogue; any `model_id` can go back as one.",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        responses: { 200: answer("The models", json(array(ref("ElevenLabsModel")))), ...failures("el", EL_KEY_FAILURES) },
      },
    },
  },
};
