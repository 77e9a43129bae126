import type { DocumentPart } from "./document-types.ts";
import { BUDGET_EXCEEDED, failures } from "./error-envelopes.ts";
import { EL_KEY_FAILURES } from "./el-speech-paths.ts";
import { answer, fallbacks, json, jsonBody, pathParam, query } from "./operation.ts";
import { array, integer, map, object, oneOfValues, ref, string } from "./schema.ts";
import { APP_PROTOCOLS } from "../realtime/profiles.ts";
import { EL_KEY } from "./security.ts";
import { profileCreateFailures } from "./realtime-paths.ts";
import { handshake } from "./websocket.ts";

// ElevenLabs Speech Engines: realtime profiles seen through /el, and the conversation socket that
// runs one (docs/compat-el.md#speech-engines-configuration-only, #conversations-convaiconversation).

const stageIn = (voice: boolean) =>
  object(
    { model_id: string() },
    {
      provider: string(),
      provider_options: map({ type: ["string", "number", "boolean"] }),
      input: { type: "object" },
      ...(voice ? { voice_id: string() } : {}),
      fallbacks: fallbacks(voice ? "tts" : "stt"),
    },
  );
const stageOut = (voice: boolean) =>
  object(
    { model_id: string(), provider: string(), provider_options: map(string()), input: { type: "object" } },
    { ...(voice ? { voice_id: string() } : {}), fallbacks: fallbacks(voice ? "tts" : "stt") },
  );
const protocol = oneOfValues(
  APP_PROTOCOLS,
  "What the router speaks to the application (not an ElevenLabs field): ElevenLabs' Speech Engine protocol, with its signed token (the default of engines made here), or ConversationRelay",
);
const engine = object({ ws_url: string("The application's WebSocket", { format: "uri" }) }, { request_headers: map(string()), protocol });
const empty = { type: "object" };

export const elEnginePaths: DocumentPart = {
  schemas: {
    SpeechEngine: object({
      speech_engine_id: string("The realtime profile's id (`rp_…`)"),
      name: string(),
      speech_engine: object({ ws_url: string(), request_headers: map(string()), protocol }),
      conversation_url: string("The socket that runs it", { format: "uri" }),
      service: object({ stt: stageOut(false), tts: stageOut(true) }, {}, "The interface's extension block: the STT and TTS models"),
      asr: empty,
      tts: object({ model_id: string() }, { voice_id: string() }),
      turn: empty,
      vad: empty,
      conversation: empty,
      privacy: empty,
      call_limits: empty,
      language: string(),
      cascade_timeout_seconds: integer(),
      tags: array(string()),
      overrides: empty,
      metadata: object({ created_at_unix_secs: integer(), updated_at_unix_secs: integer() }),
    }),
  },
  paths: {
    "/el/v1/speech-engine": {
      post: {
        operationId: "elCreateSpeechEngine",
        summary: "Create a Speech Engine (a realtime profile)",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        requestBody: jsonBody(
          object(
            { speech_engine: engine, service: object({ stt: stageIn(false) }, { tts: stageIn(true) }, "Not an ElevenLabs field (the SDK sends it as an additional body parameter)") },
            { name: string(undefined, { minLength: 1, maxLength: 200, default: "speech engine" }), tts: object({}, { model_id: string(), voice_id: string() }, "Read when `service.tts` is absent") },
          ),
        ),
        responses: {
          200: answer("The engine", json(ref("SpeechEngine"))),
          ...failures("el", profileCreateFailures("the field", EL_KEY_FAILURES)),
        },
      },
    },
    "/el/v1/speech-engine/{speech_engine_id}": {
      get: {
        operationId: "elGetSpeechEngine",
        summary: "A Speech Engine",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: [pathParam("speech_engine_id", "The engine's id (`rp_…`)")],
        responses: { 200: answer("The engine", json(ref("SpeechEngine"))), ...failures("el", { ...EL_KEY_FAILURES, 404: "`not_found`: no such engine of this account" }) },
      },
    },
    "/el/v1/convai/conversation/get-signed-url": {
      get: {
        operationId: "elGetSignedUrl",
        summary: "A signed URL that opens one conversation with a Speech Engine",
        description: "Its signature is a single-use client secret of 15 minutes.",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        parameters: [query("agent_id", "The Speech Engine's id", string(), true)],
        responses: {
          200: answer("The URL", json(object({ signed_url: string("`ws(s)://…/el/v1/convai/conversation?agent_id=…&conversation_signature=…`", { format: "uri" }) }))),
          ...failures("el", { 400: "`invalid_request`: no `agent_id`", ...EL_KEY_FAILURES, 404: "`not_found`: no such engine of this account" }),
        },
      },
    },
    "/el/v1/convai/conversation": {
      get: handshake({
        operationId: "elOpenConversationSocket",
        summary: "A Speech Engine as a live conversation (WebSocket)",
        description:
          "ElevenLabs' conversation protocol: `user_audio_chunk` frames in; `conversation_initiation_metadata`, transcripts, answers, `audio`, interruptions and pings out. Opened by a signed URL, or with `agent_id` and a key. A bad signature or key closes 4401, a disabled account 4403.",
        tags: ["ElevenLabs-compatible"],
        security: [{ conversationSignature: [] }, { xiApiKey: [] }, { bearer: [] }],
        parameters: [query("agent_id", "The Speech Engine's id", string(), true), query("conversation_signature", "From a signed URL")],
        surface: "el",
        channel: "/el/v1/convai/conversation",
        docs: "docs/compat-el.md",
        refusals: {
          400: "`invalid_request`: no `agent_id`, an engine that no longer plans",
          401: "A plain GET without the upgrade: `missing_api_key` or `invalid_api_key`",
          402: "`insufficient_balance`: the account cannot pay for the engine's models",
          429: BUDGET_EXCEEDED,
          403: "A plain GET without the upgrade: `tenant_disabled`",
          404: "`not_found`: no such engine of this account",
          422: "`model_not_priced`",
          501: "`not_implemented`: a plain GET without the upgrade",
        },
      }),
    },
  },
};
