import { cloneField, RECORDINGS } from "./custom-voice-paths.ts";
import type { DocumentPart } from "./document-types.ts";
import { failures } from "./error-envelopes.ts";
import { EL_KEY_FAILURES } from "./el-speech-paths.ts";
import { answer, formBody, json, pathParam, query } from "./operation.ts";
import { array, boolean, constant, integer, map, nullable, object, oneOfValues, ref, string } from "./schema.ts";
import { EL_KEY } from "./security.ts";

// `/el` voices (docs/compat-el.md#voices): the voice catalogue and the caller's cloned voices as
// ElevenLabs lists them, and instant voice cloning onto `/v1/custom-voices`.

const VOICE_ID = pathParam("voice_id", "The voice id verbatim, percent-escapes decoded", string(undefined, { minLength: 1, maxLength: 120 }));
const LISTING_FAILURES = { ...EL_KEY_FAILURES, 503: "`voice_catalogue_unavailable`: no provider's voice list could be had yet (`Retry-After`)" };

export const elVoicePaths: DocumentPart = {
  schemas: {
    ElevenLabsVoice: object({
      voice_id: string(),
      name: string(),
      category: oneOfValues(["premade", "professional", "cloned"]),
      labels: map(string(), "The catalogue's labels (`gender`, `accent`, …), and `provider`: where a request goes first"),
      description: nullable(string()),
      preview_url: nullable(string(undefined, { format: "uri" })),
      available_for_tiers: array(string()),
      settings: { type: "null" },
      high_quality_base_model_ids: array(string(), "Every model that has the voice, as `/el/v1/models` spells them"),
      verified_languages: array(object({ language: string(), model_id: string(), accent: nullable(string()), locale: nullable(string()), preview_url: { type: "null" } })),
      created_at_unix: integer("When the voice was first seen"),
      is_owner: boolean("The caller's cloned voice"),
    }),
  },
  paths: {
    "/el/v2/voices": {
      get: {
        operationId: "elSearchVoices",
        summary: "ElevenLabs-compatible voice search (voices.search)",
        description: "Each voice once; other ElevenLabs parameters are ignored.",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: [
          query("search", "The catalogue's text search (relevance order)"),
          query("page_size", "Voices per page", integer(undefined, { minimum: 1, maximum: 100, default: 10 })),
          query("next_page_token", "The previous page's `next_page_token`"),
          query("sort", "`created_at_unix`: newest first", oneOfValues(["name", "created_at_unix"])),
          query("sort_direction", "Only `desc` is offered", oneOfValues(["desc"])),
          query("category", "`premade` (official), `cloned` (the caller's), `professional`, `generated`, `famous`, `high_quality` (community)"),
          query("voice_type", "`default`: official voices only", oneOfValues(["default"])),
        ],
        responses: {
          200: answer("A page of voices", json(object({ voices: array(ref("ElevenLabsVoice")), has_more: boolean(), total_count: integer(), next_page_token: nullable(string()) }))),
          ...failures("el", {
            400: "`invalid_request`: a bad `page_size`, `sort` or `next_page_token`",
            ...LISTING_FAILURES,
            409: "`catalogue_changed`: the catalogue changed since the token was made; start again",
          }),
        },
      },
    },
    "/el/v1/voices": {
      get: {
        operationId: "elListVoices",
        summary: "ElevenLabs-compatible voice list (voices.getAll): every voice at once",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        responses: {
          200: answer("Every voice, by name", json(object({ voices: array(ref("ElevenLabsVoice")), has_more: constant(false), total_count: integer() }))),
          ...failures("el", LISTING_FAILURES),
        },
      },
    },
    "/el/v1/voices/{voice_id}": {
      get: {
        operationId: "elGetVoice",
        summary: "ElevenLabs-compatible voice (voices.get)",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: [VOICE_ID],
        responses: {
          200: answer("The voice", json(ref("ElevenLabsVoice"))),
          ...failures("el", { 400: "`invalid_request`: not a voice id", ...EL_KEY_FAILURES, 404: "`not_found`: neither the catalogue nor the caller has the voice" }),
        },
      },
      delete: {
        operationId: "elDeleteVoice",
        summary: "ElevenLabs-compatible voice delete (cloned voices)",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: [VOICE_ID],
        responses: {
          200: answer("Deleted, at its provider too", json(object({ status: constant("ok") }))),
          ...failures("el", {
            400: "`invalid_request`: not a voice id",
            ...EL_KEY_FAILURES,
            404: "`not_found`: no such cloned voice of the caller",
            409: "`stale_transition`: the voice is being deleted already",
            502: "`upstream_error`: the provider could not delete it",
            503: "`custom_voices_unavailable`: the provider that holds the voice is not configured here",
          }),
        },
      },
    },
    "/el/v1/voices/add": {
      post: {
        operationId: "elAddVoice",
        summary: "ElevenLabs-compatible instant voice cloning",
        description: "Cloned by ElevenLabs when this deployment has it, else by the first provider here that can clone (docs/voices.md#cloned-voices).",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        requestBody: formBody(
          object({ name: cloneField("name"), files: RECORDINGS }, { description: cloneField("description"), labels: cloneField("labels", "A JSON object of strings; its `language` is the voice's") }),
        ),
        responses: {
          200: answer("The new voice", json(object({ voice_id: string(), requires_verification: constant(false) }))),
          ...failures("el", {
            400: "`invalid_request`: a missing name or file, a field past its length, bad `labels`, no provider here can clone",
            ...EL_KEY_FAILURES,
            402: "`insufficient_balance`: the paid balance cannot pay the clone fee",
            413: "`payload_too_large`: over `MAX_AUDIO_UPLOAD_BYTES`",
            422: "`custom_voices_failed`: the provider refused the recordings",
            502: "`upstream_error`: the provider failed",
          }),
        },
      },
    },
  },
};
