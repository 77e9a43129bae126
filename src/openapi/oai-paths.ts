import type { DocumentPart } from "./document-types.ts";
import { BUDGET_EXCEEDED, failures } from "./error-envelopes.ts";
import { answer, binary, CACHE_FIELD, fallbacks, fallbacksText, formBody, json, jsonBody, pathParam, query } from "./operation.ts";
import { array, boolean, constant, file, integer, number, object, oneOfValues, ref, string } from "./schema.ts";
import { BEARER } from "./security.ts";
import { handshake } from "./websocket.ts";

// `/oai` (docs/compat-oai.md): OpenAI's audio API for the OpenAI SDK with its base URL pointed
// here. An empty balance is OpenAI's 429 `insufficient_quota` on this surface, never 402.

const KEY = { 401: "`missing_api_key` or `invalid_api_key` (`authentication_error`)", 403: "`tenant_disabled` (`permission_error`)" };
const ROUTED = {
  400: "`missing_required_parameter` (`param`: `model`, `voice`, `input`, `file`), `invalid_request` naming the field, `model_not_found`, `no_matching_provider`, `invalid_output_format`",
  ...KEY,
  403: "`tenant_disabled`, `provider_not_allowed` (`permission_error`)",
  422: "`model_not_priced`",
  429: `\`insufficient_quota\`: the balance cannot pay for the request; ${BUDGET_EXCEEDED} (\`rate_limit_error\`)`,
  502: "`upstream_error`: the provider failed before any output",
  503: "`provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After`)",
};
const sse = (events: string) => ({ "text/event-stream": { schema: { type: "string", description: events } } });
const usage = object({ type: constant("duration"), seconds: integer("The billed duration: the file's, rounded up to the second") });

export const oaiPaths: DocumentPart = {
  schemas: {
    ProviderPreferences: object(
      {},
      { only: array(string()), ignore: array(string()), order: array(string()), allow_fallbacks: boolean() },
      "Which providers may serve the request (docs/routing.md); not an OpenAI field",
    ),
    OpenAIModel: object(
      {
        id: string("`{provider}/{model}`, or an operator's alias: what any `model` of /oai accepts"),
        object: constant("model"),
        created: integer("When the server started"),
        owned_by: string("The provider (`voxroute` for an alias several providers serve)"),
      },
      { alias_of: string("An operator's alias only: the served model it stands for (docs/catalogue.md#operator-aliases)") },
    ),
  },
  paths: {
    "/oai/audio/speech": {
      post: {
        operationId: "oaiCreateSpeech",
        summary: "OpenAI-compatible text to speech",
        description:
          "The audio streams back as it is produced. A failure before any audio is an error status; after it, the body is cut short (or, with `stream_format: sse`, ends with OpenAI's `error` event). `pcm`, `wav` and `flac` are 24 kHz; `opus` is Ogg Opus at 48 kHz.",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        requestBody: jsonBody(
          object(
            { model: string("Any TTS model of the catalogue (bare id, slug, alias or `{provider}/{id}`)"), input: string("At most 4096 characters", { minLength: 1, maxLength: 4096 }) },
            {
              voice: string("Passed verbatim; required when every candidate requires one", { minLength: 1 }),
              response_format: oneOfValues(["mp3", "opus", "aac", "flac", "pcm", "wav"]),
              instructions: string("The provider option `instructions`"),
              pronunciation_dictionaries: array(
                { anyOf: [string(), object({ pronunciation_dictionary_id: string() }, { version_id: string() })] },
                "This router's member: at most 3 of the tenant's pronunciation dictionaries (docs/pronunciation.md)",
              ),
              speed: number("Only providers that honour it are candidates", { minimum: 0.25, maximum: 4 }),
              stream_format: oneOfValues(["audio", "sse"]),
              cache: CACHE_FIELD,
              provider: ref("ProviderPreferences"),
              fallbacks: fallbacks("tts"),
            },
          ),
          "Other OpenAI fields are ignored",
        ),
        responses: {
          200: answer("The audio, in `response_format`", {
            ...binary("audio/mpeg"),
            ...binary("audio/L16"),
            ...binary("audio/wav"),
            ...binary("audio/flac"),
            ...binary("audio/aac"),
            ...binary("audio/ogg"),
            ...sse("`speech.audio.delta` events with base64 audio, then `speech.audio.done` with the usage"),
          }),
          ...failures("oai", { ...ROUTED, 413: "`tts_text_too_large`: `input` over 4096 characters; `payload_too_large`: a body over 1 MiB" }),
        },
      },
    },
    "/oai/audio/transcriptions": {
      post: {
        operationId: "oaiCreateTranscription",
        summary: "OpenAI-compatible file transcription",
        description:
          "Billed as `POST /v1/stt/transcriptions` (docs/stt-files.md). `prompt`, `temperature`, `timestamp_granularities[]`, `include[]` and `chunking_strategy` are accepted and ignored; any other field is 400.",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        requestBody: formBody(
          object(
            { file: file(), model: string("A synchronous STT model") },
            {
              language: string(),
              response_format: oneOfValues(["json", "text", "srt", "vtt", "verbose_json"]),
              stream: oneOfValues(["true", "false"], "`true`: server-sent events (`response_format` `json` or `text`)"),
              provider: string("Provider preferences as JSON (see `ProviderPreferences`)"),
              fallbacks: fallbacksText("stt"),
            },
          ),
        ),
        responses: {
          200: answer("The transcript, in `response_format`", {
            ...json({
              anyOf: [
                object({ text: string(), usage }),
                object({
                  task: constant("transcribe"),
                  language: string("The request's `language`, or empty"),
                  duration: number(),
                  text: string(),
                  segments: array(
                    object({
                      id: integer(),
                      seek: integer(),
                      start: number(),
                      end: number(),
                      text: string(),
                      tokens: array(integer()),
                      temperature: number(),
                      avg_logprob: number(),
                      compression_ratio: number(),
                      no_speech_prob: number(),
                    }),
                  ),
                  usage,
                }),
              ],
            }),
            "text/plain": { schema: string() },
            "application/x-subrip": { schema: string() },
            "text/vtt": { schema: string() },
            ...sse("`transcript.text.delta` per final segment, then `transcript.text.done`"),
          }),
          ...failures("oai", {
            ...ROUTED,
            413: "`payload_too_large`: over `MAX_AUDIO_UPLOAD_BYTES`",
            422: "`indeterminate_audio_duration`, `validation`, `model_not_priced`",
            503: "`provider_overloaded`: every candidate is at capacity; `provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After` for both)",
          }),
        },
      },
    },
    "/oai/realtime": {
      get: handshake({
        operationId: "oaiOpenRealtimeSocket",
        summary: "OpenAI's Realtime API (WebSocket)",
        description:
          "`?model=<profile id>`: the profile as a conversation; `?intent=transcription` or no model: a transcription session of any streaming STT model; an ephemeral key (`ek_…`) opens what it was minted for. The key may also come as the subprotocol `openai-insecure-api-key.<key>` or `oai-insecure-api-key.<key>`. A bad key (or a used, expired or unknown ephemeral key) is an `error` event, then the close 4401 / 4403, after the upgrade. Events: docs/compat-oai.md (GA names, in OpenAI's order).",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        parameters: [query("model", "A realtime profile's id"), query("intent", "`transcription`: a transcription session", oneOfValues(["transcription"]))],
        surface: "oai",
        channel: "/oai/realtime",
        docs: "docs/compat-oai.md",
        refusals: {
          400: "`model_not_found` (`param`: `model`): neither a profile of the account nor a transcription session; `invalid_request`",
          401: "A plain GET without the upgrade: `missing_api_key` or `invalid_api_key`",
          403: "A plain GET without the upgrade: `tenant_disabled`",
          422: "`model_not_priced`",
          429: `\`insufficient_quota\`: the account cannot pay for the conversation; ${BUDGET_EXCEEDED}`,
          501: "`not_implemented`: a plain GET without the upgrade",
        },
      }),
    },
    "/oai/realtime/client_secrets": {
      post: {
        operationId: "oaiCreateClientSecret",
        summary: "An ephemeral key (`ek_…`) for one /oai/realtime session",
        description: "Unlike OpenAI's, a key opens one socket: it is spent when used.",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        requestBody: jsonBody(
          object(
            {
              session: object(
                { type: oneOfValues(["realtime", "transcription"]) },
                { model: string("`realtime`: the profile's id"), audio: { type: "object", description: "`transcription`: `input.format`, `input.transcription`, `input.turn_detection`" } },
              ),
            },
            { expires_after: object({}, { anchor: constant("created_at"), seconds: integer(undefined, { minimum: 10, maximum: 7200, default: 600 }) }) },
          ),
        ),
        responses: {
          200: answer(
            "The key and the session it opens",
            json(
              object({
                value: string("`ek_…`"),
                expires_at: integer("Unix seconds"),
                session: {
                  ...object({ type: oneOfValues(["realtime", "transcription"]), object: oneOfValues(["realtime.session", "realtime.transcription_session"]) }),
                  description: "OpenAI's session object, as its `session.created` event shows it (docs/compat-oai.md)",
                  additionalProperties: true,
                },
              }),
            ),
          ),
          ...failures("oai", {
            400: "`invalid_request` naming the member; `missing_required_parameter` (`session.model`); `model_not_found` (`session.model` is not a profile of the account)",
            ...KEY,
            403: "`tenant_disabled`, `provider_not_allowed` (`permission_error`)",
            413: "`payload_too_large`: over 1 MiB",
          }),
        },
      },
    },
    "/oai/models": {
      get: {
        operationId: "oaiListModels",
        summary: "OpenAI-compatible model list",
        description: "Every TTS and STT model this deployment serves, once per provider; not paged.",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        responses: { 200: answer("The models", json(object({ object: constant("list"), data: array(ref("OpenAIModel")) }))), ...failures("oai", KEY) },
      },
    },
    "/oai/models/{model}": {
      get: {
        operationId: "oaiGetModel",
        summary: "OpenAI-compatible model",
        tags: ["OpenAI-compatible"],
        security: BEARER,
        parameters: [pathParam("model", "`{provider}/{model}`, its slash as is or URL-encoded")],
        responses: {
          200: answer("The model", json(ref("OpenAIModel"))),
          ...failures("oai", { ...KEY, 404: "`model_not_found` (`not_found_error`)" }),
        },
      },
    },
  },
};
