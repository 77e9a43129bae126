import { VOICE_CATEGORIES } from "../voices/voice-entry.ts";
import { VOICE_SORTS } from "../voices/voice-query.ts";
import type { DocumentPart } from "./document-types.ts";
import { failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, binary, json, query, repeatedQuery } from "./operation.ts";
import { array, boolean, integer, map, nullable, number, object, oneOfValues, ref, string, timestamp } from "./schema.ts";
import { NO_KEY, OPTIONAL_BEARER } from "./security.ts";

// `GET /v1/providers`, `GET /v1/models` (docs/catalogue.md) and the voice catalogue (docs/voices.md).

const named = object({ id: string(), name: string() });

/** What a binding can do and costs (catalogue/views.ts `bindingFields`). */
const BINDING = {
  required: { streaming: boolean("Serves streaming requests"), synchronous: boolean("TTS: one complete answer; STT: one blocking file request") },
  optional: {
    batch: boolean("STT only: the provider queues the file request internally"),
    formats: array(oneOfValues(["pcm", "mp3", "opus", "aac", "flac", "wav", "ulaw"]), "TTS output formats"),
    input_formats: array(string(), "STT: the audio formats it takes (`pcm_16000`, …), when limited"),
    instructions: object({ mode: string(), honored: boolean() }, {}, "TTS: how style instructions are handled"),
    pricing: ref("Pricing"),
  },
};

const schemas = {
  Pricing: object(
    { currency: oneOfValues(["usd"]), unit: oneOfValues(["1000 characters", "minute"]), unitPrice: string("Decimal USD per unit, at most 6 significant digits") },
    { requestPrice: string("A fixed fee in USD per request") },
    "Absent when the binding is unpriced",
  ),
  ModelEntry: object(
    { id: string("The provider's model id"), canonical: string("`{author}/{modelName}`"), aliases: array(string()), ...BINDING.required, health: ref("BindingHealth") },
    BINDING.optional,
  ),
  BindingHealth: object(
    {
      status: oneOfValues(
        ["up", "degraded", "down"],
        "`up`: no failure since its last success; `degraded`: failures below the threshold, or its cooldown over and a session probing it; `down`: its circuit is open, new sessions skip it until `retry_at`",
      ),
      consecutive_failures: integer("Provider failures since its last success (client mistakes do not count)"),
      retry_at: nullable(timestamp("While down: when its cooldown ends and one session may probe it")),
      cooldown_ms: nullable(integer("While down or half-open: the length of its latest cooldown (it doubles at each opening without a success, up to `PROVIDER_COOLDOWN_MAX_MS`)")),
      last_failure: nullable(object({ at: timestamp(), reason: string() }, {}, "The latest provider failure counted")),
    },
    {},
    "The binding's health in this server process (docs/routing.md#provider-health)",
  ),
  ProviderCatalogue: object({
    providers: map(
      object({
        name: string(),
        kind: oneOfValues(["local", "cloud"]),
        requires_voice: boolean(),
        defaults: object(
          {},
          {
            tts: object({ model: string() }, { voice: string("The recommended voice") }),
            stt: object({ model: string() }, { synchronousModel: string("The file-transcription model, when it differs") }),
          },
          "Advice for clients: never applied to a request",
        ),
        tts: array(ref("ModelEntry")),
        stt: array(ref("ModelEntry")),
      }),
      "Every served provider, by id",
    ),
  }),
  ModelCatalogue: object({
    ...Object.fromEntries(
      ["tts", "stt"].map((capability) => [
        capability,
        array(
          object({
            id: string("The canonical slug"),
            canonical: string(),
            name: string(),
            aliases: array(string()),
            providers: array(object({ id: string(), name: string(), provider_model_id: string(), requires_voice: boolean(), ...BINDING.required }, BINDING.optional)),
          }),
        ),
      ]),
    ),
    model_aliases: array(
      object({
        id: string("The alias, which any `model` accepts"),
        alias_of: string("The served model's name it stands for, as the operator set it"),
        capability: oneOfValues(["tts", "stt"]),
        models: array(string("A canonical slug the alias reaches")),
      }),
      "The operator's model aliases (docs/catalogue.md#operator-aliases); empty unless set",
    ),
    voice_aliases: array(
      object({ model: string("The canonical slug"), id: string("The alias, which `voice` accepts on this model"), alias_of: string("The voice it is spoken as") }),
      "The operator's voice aliases, per model; empty unless set",
    ),
  }),
  VoiceEntry: object({
    model: named,
    voice: object({
      id: string("What a request names as `voice`, exactly"),
      name: string(),
      description: string(),
      category: named,
      preview_url: nullable(string("A sample to listen to", { format: "uri" })),
      languages: array(object({ id: string(), name: string(), locale: nullable(string()), accent: nullable(string()) })),
      labels: array(object({ facet: named, value: named })),
      source_urls: array(string(undefined, { format: "uri" })),
      scope: object({ type: oneOfValues(["global", "organization"]) }),
      first_seen_at: timestamp(),
      last_seen_at: timestamp(),
    }),
    providers: array(
      object({
        id: string(),
        name: string(),
        default: boolean("Where a request naming only the model and voice goes first"),
        provider_model_id: string(),
        metrics: object(Object.fromEntries(["popularity_score", "likes", "saves", "shares", "uses", "characters_7d", "characters_1y", "clones"].map((m) => [m, number()]))),
      }),
    ),
  }),
  VoicePage: object(
    {
      voices: array(ref("VoiceEntry")),
      total_count: integer(),
      has_more: boolean(),
      next_cursor: nullable(string("The next page's `cursor`")),
      catalogue_updated_at: timestamp(),
    },
    { facets: array(object({ id: string(), name: string(), values: array(object({ id: string(), name: string(), count: integer() })) }), "With `include_facets=true`") },
  ),
};

const REPEATABLE = "; repeatable, any of them";

export const cataloguePaths: DocumentPart = {
  schemas,
  paths: {
    "/v1/providers": {
      get: {
        operationId: "listProviders",
        summary: "Provider catalogue",
        description: "Every provider this deployment serves, its models, defaults and prices (docs/catalogue.md), and each binding's health in this process (docs/routing.md#provider-health).",
        tags: ["catalogue"],
        security: NO_KEY,
        responses: { 200: answer("The providers", json(ref("ProviderCatalogue"))), ...failures("native", {}) },
      },
    },
    "/v1/models": {
      get: {
        operationId: "listModels",
        summary: "Model catalogue",
        description: "TTS and STT models, each with the providers that serve it (docs/catalogue.md).",
        tags: ["catalogue"],
        security: NO_KEY,
        responses: { 200: answer("The models", json(ref("ModelCatalogue"))), ...failures("native", {}) },
      },
    },
    "/v1/voices": {
      get: {
        operationId: "searchVoices",
        summary: "Voice catalogue: search, filters, facets, pages",
        description: "One entry per model and voice (docs/voices.md). With a Bearer key, the tenant's cloned voices are searched alongside. Unknown or repeated single parameters are 400.",
        tags: ["catalogue"],
        security: OPTIONAL_BEARER,
        parameters: [
          query("q", "Search words: each must begin a word of the entry", string(undefined, { maxLength: 200 })),
          repeatedQuery("model", `A TTS model name${REPEATABLE}`),
          repeatedQuery("provider", `A provider id${REPEATABLE}`),
          repeatedQuery("language", `A language (\`en\`) or locale (\`en-GB\`)${REPEATABLE}`),
          repeatedQuery("category", `A voice category${REPEATABLE}`, oneOfValues(VOICE_CATEGORIES)),
          repeatedQuery("filter", "`facet:value`, such as `gender:female`; repeatable"),
          query("added_after", "Voices first seen after this RFC 3339 time", timestamp()),
          query("sort", "`relevance` needs `q` (its default); else `featured` by default", oneOfValues(VOICE_SORTS)),
          query("limit", "Entries per page", integer(undefined, { minimum: 1, maximum: 100, default: 20 })),
          query("cursor", "The previous page's `next_cursor`", string(undefined, { minLength: 1, maxLength: 512 })),
          query("include_facets", "Add `facets`", oneOfValues(["true", "false"])),
        ],
        responses: {
          200: answer("A page of voices", json(ref("VoicePage"))),
          ...failures("native", {
            400: "`invalid_request` naming the parameter (`param`): a bad value or cursor, an unknown parameter, a single one given twice",
            ...KEY_FAILURES,
            409: "`catalogue_changed`: the cursor is of a catalogue that has changed since; start again from the first page",
            503: "`voice_catalogue_unavailable`: no provider's voice list could be had yet (`Retry-After`)",
          }),
        },
      },
    },
    "/v1/voices/preview": {
      get: {
        operationId: "previewVoice",
        summary: "A sample of an embedded engine's voice, as MP3",
        description: "The `preview_url` of an embedded voice's catalogue entry: a short sentence in its language, made once and kept.",
        tags: ["catalogue"],
        security: NO_KEY,
        parameters: [query("model", "The canonical model", string(), true), query("voice", "The voice id", string(), true)],
        responses: {
          200: answer("The sample", binary("audio/mpeg"), { "cache-control": { schema: { type: "string" }, description: "`public, max-age=86400`" } }),
          ...failures("native", {
            400: "`invalid_request`: `model` or `voice` longer than 200 characters",
            404: "`not_found`: no preview of this model and voice is made here (the entry's `preview_url` says where it is)",
            502: "`upstream_error`: the preview could not be made",
          }),
        },
      },
    },
  },
};
