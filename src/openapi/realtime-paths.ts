import { EXPIRES_IN } from "../realtime/client-secrets.ts";
import { OUTPUT_FORMATS } from "../realtime/output-formats.ts";
import { APP_PROTOCOLS } from "../realtime/profiles.ts";
import type { DocumentPart } from "./document-types.ts";
import { BUDGET_EXCEEDED, failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, CACHE_FIELD, fallbacks, json, jsonBody, pathParam, query } from "./operation.ts";
import { array, boolean, constant, integer, map, object, oneOfValues, ref, string, timestamp } from "./schema.ts";
import { CURSOR, LIMIT, page } from "./paging.ts";
import { BEARER, SOCKET_KEY } from "./security.ts";
import { handshake } from "./websocket.ts";

// Realtime profiles (docs/realtime-profiles.md), their client secrets and the `/v1/realtime`
// conversation socket (docs/realtime.md).

const OPTIONS = map({ type: ["string", "number", "boolean"] }, "Provider-native options (kept as strings): at most 50");

/**
 * Creating a realtime profile, natively or as an ElevenLabs speech engine (the same checks): its
 * pipeline's, the surface's key checks, and the body's size. `naming`: how the surface points at
 * the member at fault.
 */
export const profileCreateFailures = (naming: string, keyFailures: Record<number, string>): Record<number, string> => ({
  400: `\`invalid_request\`, \`model_required\`, \`model_not_found\` naming ${naming}; an application address that is not public`,
  ...keyFailures,
  413: "`payload_too_large`: over 1 MiB",
});

const LOCATOR = object({ pronunciation_dictionary_id: string() }, { version_id: string("Default: the latest version when the conversation starts") });

/** A pipeline as a create request gives it, or (`stored`) as the profile keeps it: its empty maps filled in. */
function pipeline(stored: boolean) {
  const stage = (capability: "stt" | "tts") => {
    const kept = {
      provider_options: OPTIONS,
      input: {
        type: "object",
        description: capability === "stt" ? "The recognizer's `/v1/stt` settings (`audio_format`, `language`, turn settings, …), at most 4 KB of JSON" : "At most 4 KB of JSON, kept",
      },
    };
    const tts = {
      pronunciation_dictionaries: array(LOCATOR, "The tenant's pronunciation dictionaries every answer is said with (at most 3; docs/pronunciation.md); given as ids or locators, kept as locators"),
      voice: string("The voice, passed as given"),
      format: oneOfValues(Object.keys(OUTPUT_FORMATS), "The audio a conversation sends its client (default `pcm_16000`)"),
      cache: CACHE_FIELD,
    };
    return object(
      { model: string(`A streaming ${capability.toUpperCase()} model of this deployment`), ...(stored ? kept : {}) },
      { provider: string("Pins the provider"), ...(stored ? {} : kept), ...(capability === "tts" ? tts : {}), fallbacks: fallbacks(capability) },
    );
  };
  const headers = { headers: map(string(), "Headers for the connection to the application") };
  return object(
    {
      stt: stage("stt"),
      tts: stage("tts"),
      upstream: object(
        { url: string("The application's WebSocket (`ws://` or `wss://`, a public address unless the operator allows private ones)", { format: "uri", maxLength: 2048 }), ...(stored ? headers : {}) },
        {
          ...(stored ? {} : headers),
          partial_prompts: boolean("Interim transcripts also go to the application"),
          protocol: oneOfValues(APP_PROTOCOLS, "What the router speaks to the application: ConversationRelay (the default) or ElevenLabs' Speech Engine protocol"),
          ...(stored ? { signing_key_id: string("With `speech_engine`: the key that created the profile, whose SHA-256 signs the connection's token") } : {}),
        },
      ),
    },
    { greeting: string("Spoken when a conversation starts", { minLength: 1, maxLength: 2000 }) },
  );
}

const PROFILE_ID = pathParam("profile_id", "The profile's id (`rp_…`)");

export const realtimePaths: DocumentPart = {
  schemas: {
    RealtimeProfile: object({
      id: string(),
      object: constant("realtime.profile"),
      type: constant("pipeline"),
      name: string(),
      pipeline: pipeline(true),
      revision: integer(),
      created_at: timestamp(),
      updated_at: timestamp(),
    }),
  },
  paths: {
    "/v1/realtime/profiles": {
      post: {
        operationId: "createRealtimeProfile",
        summary: "Create a realtime profile",
        description: "A reusable STT → application → TTS pipeline (docs/realtime-profiles.md). A tenant keeps at most 1000.",
        tags: ["realtime"],
        security: BEARER,
        requestBody: jsonBody(object({ name: string(undefined, { minLength: 1, maxLength: 200 }), pipeline: pipeline(false) })),
        responses: {
          201: answer("The profile", json(ref("RealtimeProfile"))),
          ...failures("native", profileCreateFailures("the member (`param`)", KEY_FAILURES)),
        },
      },
      get: {
        operationId: "listRealtimeProfiles",
        summary: "The tenant's realtime profiles",
        description: "Newest first, in pages (`limit`, `cursor`).",
        tags: ["realtime"],
        security: BEARER,
        parameters: [LIMIT, CURSOR],
        responses: {
          200: answer("A page of profiles", json(page("RealtimeProfile"))),
          ...failures("native", { 400: "`invalid_request` naming the parameter (`param`): a bad `limit` or `cursor`, an unknown parameter", ...KEY_FAILURES }),
        },
      },
    },
    "/v1/realtime/profiles/{profile_id}": {
      get: {
        operationId: "getRealtimeProfile",
        summary: "A realtime profile",
        tags: ["realtime"],
        security: BEARER,
        parameters: [PROFILE_ID],
        responses: { 200: answer("The profile", json(ref("RealtimeProfile"))), ...failures("native", { ...KEY_FAILURES, 404: "`not_found`: no such profile of this tenant" }) },
      },
    },
    "/v1/realtime/client-secrets": {
      post: {
        operationId: "createRealtimeClientSecret",
        summary: "A single-use client secret for /v1/realtime",
        description: "Opens one conversation of the profile without a key (a browser, a phone): spent when used, stored only as a hash (docs/realtime.md#client-secrets).",
        tags: ["realtime"],
        security: BEARER,
        requestBody: jsonBody(object({ profile_id: string() }, { expires_in: integer("Seconds", { minimum: EXPIRES_IN.min, maximum: EXPIRES_IN.max, default: EXPIRES_IN.default }) })),
        responses: {
          201: answer("The secret", json(object({ client_secret: string("`vxr_cs_…`"), expires_at: timestamp(), profile_id: string() }))),
          ...failures("native", {
            400: "`invalid_request`: no `profile_id`, a bad `expires_in`, a body that is not a JSON object",
            ...KEY_FAILURES,
            404: "`not_found`: no such profile of this tenant",
            413: "`payload_too_large`: over 1 MiB",
          }),
        },
      },
    },
    "/v1/realtime": {
      get: handshake({
        operationId: "openRealtimeSocket",
        summary: "A realtime profile as a live conversation (WebSocket)",
        description:
          "Caller audio in (binary), `realtime.*` JSON events and the answer's audio out, with barge-in. Open it with `client_secret`, or with `profile_id` and a Bearer key. A bad credential closes 4401 (`invalid_client_secret`, `invalid_api_key`, `missing_api_key`) or 4403 after the upgrade.",
        tags: ["realtime"],
        security: [{ clientSecret: [] }, ...SOCKET_KEY],
        parameters: [query("client_secret", "A secret from `POST /v1/realtime/client-secrets`"), query("profile_id", "The profile, with a Bearer key")],
        surface: "native",
        channel: "/v1/realtime",
        docs: "docs/realtime.md",
        refusals: {
          400: "`invalid_request`: neither `client_secret` nor `profile_id`, a profile that no longer plans",
          402: "`insufficient_balance`: the account cannot pay for the STT or the TTS model",
          429: BUDGET_EXCEEDED,
          404: "`not_found`: no such profile of this tenant",
          422: "`model_not_priced`",
          426: "`websocket_upgrade_required`: a plain GET without the upgrade",
        },
      }),
    },
  },
};
