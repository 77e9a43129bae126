import { CLONE_FIELD_LIMITS } from "../surfaces/clone-form.ts";
import type { DocumentPart } from "./document-types.ts";
import { failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, formBody, json, pathParam } from "./operation.ts";
import { array, boolean, constant, file, integer, nullable, object, oneOfValues, ref, string, timestamp } from "./schema.ts";
import { BEARER } from "./security.ts";

// `/v1/custom-voices` (docs/voices.md#cloned-voices): the tenant's cloned voices.

const STATUS = oneOfValues(["processing", "active", "failed", "deleting"]);
const named = object({ id: string(), name: string() });

const voiceOfModel = object({
  model: named,
  voice: object({
    id: string(),
    name: string(),
    description: nullable(string()),
    category: object({ id: constant("cloned"), name: string() }),
    languages: array(object({ id: string(), name: string(), locale: nullable(string()), accent: nullable(string()) })),
    scope: object({ type: constant("organization") }),
    status: STATUS,
    fee_credits: integer("The clone fee, charged once when the voice is ready"),
    first_seen_at: timestamp(),
    last_seen_at: timestamp(),
  }),
  providers: array(object({ id: string(), name: string(), provider_model_id: string(), status: STATUS, failure_reason: nullable(string()) })),
});

const page = { voices: array(voiceOfModel, "The voice once per speech model it can be used with"), total_count: integer(), has_more: boolean(), next_cursor: { type: "null" } };

/** The recordings of a speaker and what the voice is called: /v1/custom-voices and /el/v1/voices/add take them alike (surfaces/clone-form.ts). */
export const RECORDINGS = array(file(), "One or more recordings of the speaker (`files`; `files[]` and `file` are read too)");

/** A text field of the clone form, with its limit. */
export const cloneField = (name: keyof typeof CLONE_FIELD_LIMITS, description?: string) => string(description, { maxLength: CLONE_FIELD_LIMITS[name] });

const VOICE_ID = pathParam("voice_id", "The voice id verbatim (it may hold `:` and `@`), percent-escapes decoded", string(undefined, { minLength: 1, maxLength: 120 }));

export const customVoicePaths: DocumentPart = {
  schemas: { CustomVoice: object({ id: string("The voice id: what a request names as `voice`"), ...page }) },
  paths: {
    "/v1/custom-voices": {
      post: {
        operationId: "cloneVoice",
        summary: "Clone a voice from recordings",
        description: "The provider clones and holds the voice; its clone fee is charged once, when the voice is ready (docs/voices.md#cloned-voices).",
        tags: ["custom voices"],
        security: BEARER,
        requestBody: formBody(
          object(
            { name: cloneField("name"), provider: cloneField("provider", "The provider that clones and holds the voice"), files: RECORDINGS },
            {
              model: cloneField("model", "The one TTS model it is for (default: every TTS model of the provider)"),
              description: cloneField("description"),
              language: cloneField("language"),
            },
          ),
        ),
        responses: {
          201: answer("The voice: `active`, or `processing` (poll `GET /v1/custom-voices/{voice_id}`)", json(ref("CustomVoice"))),
          ...failures("native", {
            400: "`invalid_request`: a missing or empty field or file, a field past its length, a provider that cannot clone here, a model it does not serve, a body that is not multipart",
            ...KEY_FAILURES,
            402: "`insufficient_balance`: the paid balance cannot pay the clone fee",
            413: "`payload_too_large`: over `MAX_AUDIO_UPLOAD_BYTES`",
            422: "`custom_voices_failed`: the provider refused the recordings (its message passed on)",
            502: "`upstream_error`: the provider failed or could not be reached",
          }),
        },
      },
      get: {
        operationId: "listCustomVoices",
        summary: "The tenant's cloned voices",
        tags: ["custom voices"],
        security: BEARER,
        responses: { 200: answer("Every cloned voice, once per model", json(object(page))), ...failures("native", KEY_FAILURES) },
      },
    },
    "/v1/custom-voices/{voice_id}": {
      get: {
        operationId: "getCustomVoice",
        summary: "A cloned voice: its status and the speech models it can be used with",
        tags: ["custom voices"],
        security: BEARER,
        parameters: [VOICE_ID],
        responses: {
          200: answer("The voice", json(ref("CustomVoice"))),
          ...failures("native", { 400: "`invalid_request`: not a voice id", ...KEY_FAILURES, 404: "`not_found`: no such voice of this tenant" }),
        },
      },
      delete: {
        operationId: "deleteCustomVoice",
        summary: "Delete a cloned voice (at its provider too)",
        description: "Irreversible.",
        tags: ["custom voices"],
        security: BEARER,
        parameters: [VOICE_ID],
        responses: {
          204: answer("Deleted"),
          ...failures("native", {
            400: "`invalid_request`: not a voice id",
            ...KEY_FAILURES,
            404: "`not_found`: no such voice of this tenant",
            409: "`stale_transition`: the voice is being deleted already",
            502: "`upstream_error`: the provider could not delete it (the voice stays as it was)",
            503: "`custom_voices_unavailable`: the provider that holds the voice is not configured here",
          }),
        },
      },
    },
  },
};
