import { MAX_FALLBACKS } from "../planning/fallbacks.ts";
import type { MediaType, Parameter, ResponseObject, Schema } from "./document-types.ts";
import { array, boolean, object, oneOfValues, string } from "./schema.ts";

// Building blocks of operations: bodies, parameters and successful answers. Errors are in
// error-envelopes.ts.

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Headers every answer carries (app.ts sets `x-request-id` before routing). */
export const ANSWER_HEADERS = { "x-request-id": header("RequestId") };
/** Headers of a 4xx or a 501, which the client must not retry (surfaces/retry-verdict.ts). */
export const REFUSAL_HEADERS = { ...ANSWER_HEADERS, "x-should-retry": header("ShouldRetry") };
/** Headers of an answer that may say when to try again. */
export const RETRY_AFTER = { "retry-after": header("RetryAfter") };

export const json = (schema: Schema) => ({ "application/json": { schema } });

/** Bytes of a media type (audio), as a body's or an answer's content. */
export const binary = (type: string) => ({ [type]: { schema: { type: "string", contentMediaType: type } } });

/** A successful answer: `content` by media type (none for a 204). */
export function answer(description: string, content?: Record<string, MediaType>, headers: Record<string, unknown> = {}): ResponseObject {
  return { description, headers: { ...ANSWER_HEADERS, ...headers }, ...(content ? { content } : {}) };
}

/** A JSON request body (routes read it themselves: the document is the only place its shape is told). */
export const jsonBody = (schema: Schema, description?: string) => ({ ...(description ? { description } : {}), required: true, content: json(schema) });

/** A required `multipart/form-data` body (uploads: the file and the fields beside it). */
export const formBody = (schema: Schema) => ({ required: true, content: { "multipart/form-data": { schema } } });

export const query = (name: string, description: string, schema: Schema = string(), required = false): Parameter => ({ name, in: "query", description, schema, ...(required ? { required } : {}) });

/** A query parameter that may be given several times. */
export const repeatedQuery = (name: string, description: string, items: Schema = string()): Parameter => ({ name, in: "query", description, schema: { type: "array", items }, explode: true });

export const pathParam = (name: string, description: string, schema: Schema = string()): Parameter => ({ name, in: "path", description, required: true, schema });

/** A chain of fallback models (docs/routing.md): each a `{model}` (STT) or `{model, voice}` (TTS). */
export function fallbacks(capability: "stt" | "tts"): Schema {
  const model = string("Any model of the capability, named as `model` is; checked as the primary is (a 400 names `fallbacks[i].model`)", { minLength: 1 });
  const voice = string("The fallback model's own voice (the primary's is not inherited); a 400 names `fallbacks[i].voice`", { minLength: 1 });
  // Another member (a `voice` on STT) is refused, not ignored.
  const entry = { ...(capability === "tts" ? object({ model }, { voice }) : object({ model })), additionalProperties: false };
  return { ...array(entry, "Models tried in order after the primary model's providers, each with its own voice (docs/routing.md)"), maxItems: MAX_FALLBACKS };
}

/** `fallbacks` as JSON text in a query or a form field. */
export const fallbacksText = (capability: "stt" | "tts") =>
  string(
    `The fallback models as JSON text: ${capability === "tts" ? '`[{"model": "…", "voice": "…"}]`' : '`[{"model": "…"}]`'}, at most ${MAX_FALLBACKS}, tried after the primary's providers (docs/routing.md)`,
  );

/** `fallbacks` in a WebSocket's query: the JSON array, URL-encoded. */
export const fallbacksQuery = (capability: "stt" | "tts"): Parameter => {
  const text = fallbacksText(capability);
  return query("fallbacks", `${text.description} URL-encoded; a bad one is refused before the upgrade.`, text);
};

const CACHE_TEXT = "`false`: the router's TTS cache neither plays nor keeps this request's utterances (docs/tts-cache.md)";
/** The TTS cache opt-out, in a query and in a body. */
export const CACHE_QUERY = query("cache", CACHE_TEXT, oneOfValues(["true", "false"]));
export const CACHE_FIELD = boolean(CACHE_TEXT);

/** The provider preferences of a query (docs/routing.md). */
export const PREFERENCE_QUERY: Parameter[] = [
  query("provider_order", "Providers to try first, in this order (comma-separated or repeated ids); the others follow"),
  query("provider_only", "Only these providers (comma-separated or repeated ids)"),
  query("provider_ignore", "Never these providers (comma-separated or repeated ids)"),
  query("allow_fallbacks", "`false`: only the first matching provider is tried", oneOfValues(["true", "false"])),
];
