import { and, count, desc, eq, lt, or } from "drizzle-orm";
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Capability } from "../catalogue/types.ts";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import { fallbacksOf } from "../planning/fallbacks.ts";
import type { ModelChoice } from "../routing/candidate.ts";
import { resolve } from "../routing/resolve.ts";
import { NO_PREFERENCES } from "../routing/preferences.ts";
import { OUTPUT_FORMATS } from "./output-formats.ts";
import { literalRefusal } from "./upstream-guard.ts";
import { isObject } from "../util/is-object.ts";
import { locatorsOfBody } from "../pronunciation/locators.ts";

// Realtime profiles: a tenant's reusable pipeline (STT model, TTS model, the application's
// WebSocket), stored once and named by id. The interface fixes `stt.model`, `tts.model` and
// `upstream.url`; the other members kept here are ours (see docs/realtime-profiles.md):
// `stt.provider`, `stt.provider_options`, `stt.input`, `tts.provider`, `tts.voice`,
// `tts.provider_options`, `tts.format`, `stt.fallbacks`, `tts.fallbacks`, `upstream.headers`,
// `upstream.partial_prompts`, `upstream.protocol`, `upstream.signing_key_id`, `greeting`,
// `tts.pronunciation_dictionaries`.

/** What the router speaks to the application (docs/realtime.md#application-protocols). */
export const APP_PROTOCOLS = ["conversation_relay", "speech_engine"] as const;
export type AppProtocol = (typeof APP_PROTOCOLS)[number];

export interface PipelineStage {
  model: string;
  provider?: string;
  voice?: string;
  /** TTS only: the audio a conversation sends its client (see `OUTPUT_FORMATS`). */
  format?: string;
  provider_options: Record<string, string>;
  input: Record<string, unknown>;
  /** Models tried after the stage's own providers (`{model}` for STT, `{model, voice}` for TTS). */
  fallbacks?: ModelChoice[];
  /** TTS: `false`, the router's TTS cache neither plays nor keeps the conversation's speech. */
  cache?: false;
  /** TTS only: the tenant's pronunciation dictionaries every answer is spoken with (docs/pronunciation.md). */
  pronunciation_dictionaries?: { pronunciation_dictionary_id: string; version_id?: string }[];
}

export interface Pipeline {
  stt: PipelineStage;
  tts: PipelineStage;
  upstream: {
    url: string;
    headers: Record<string, string>;
    partial_prompts?: boolean;
    /** Absent: ConversationRelay. */
    protocol?: AppProtocol;
    /** `speech_engine`: the API key that created the profile, whose SHA-256 signs the connection's token. */
    signing_key_id?: string;
  };
  /** Spoken when a conversation starts. */
  greeting?: string;
}

export interface RealtimeProfile {
  id: string;
  object: "realtime.profile";
  type: "pipeline";
  name: string;
  pipeline: Pipeline;
  revision: number;
  created_at: string;
  updated_at: string;
}

/** Profiles a tenant may keep (checked before each create, so two racing creates may pass it by one). */
export const PROFILES_PER_TENANT = 1000;

/** Bounds on what a profile stores: it is configuration, not a place for data. */
const LIMITS = { entries: 50, key: 100, value: 2000, input: 4096, url: 2048, text: 200, greeting: 2000 };
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the router sets itself on the connection to the application. */
const ROUTER_HEADERS = /^(host|connection|upgrade|content-length|transfer-encoding|sec-websocket-.*)$/i;

function stringMap(value: unknown, param: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new ApiError("invalid_request", `${param} must be an object`, { param });
  const entries = Object.entries(value);
  if (entries.length > LIMITS.entries) throw new ApiError("invalid_request", `${param} holds at most ${LIMITS.entries} entries`, { param });
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (!k || k.length > LIMITS.key || RESERVED_KEYS.has(k))
      throw new ApiError("invalid_request", `${param} has a key that is empty, too long or reserved: ${JSON.stringify(k.slice(0, LIMITS.key))}`, { param });
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") throw new ApiError("invalid_request", `${param}.${k} must be a string, number or boolean`, { param });
    const text = String(v);
    if (text.length > LIMITS.value) throw new ApiError("invalid_request", `${param}.${k} is longer than ${LIMITS.value} characters`, { param });
    out[k] = text;
  }
  return out;
}

function headers(value: unknown): Record<string, string> {
  const param = "pipeline.upstream.headers";
  const out = stringMap(value, param);
  for (const [name, text] of Object.entries(out)) {
    if (!HEADER_NAME.test(name) || ROUTER_HEADERS.test(name)) throw new ApiError("invalid_request", `${param}: ${JSON.stringify(name)} is not a header the application may be sent`, { param });
    if (/[\r\n\0]/.test(text)) throw new ApiError("invalid_request", `${param}.${name} must not contain line breaks`, { param });
  }
  return out;
}

function shortText(value: unknown, param: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !value || value.length > LIMITS.text) throw new ApiError("invalid_request", `${param} must be a string of 1 to ${LIMITS.text} characters`, { param });
  return value;
}

function stage(catalogue: Catalogue, value: unknown, capability: Capability): PipelineStage {
  const param = `pipeline.${capability}`;
  if (!isObject(value)) throw new ApiError("invalid_request", `${param} must be an object with a model`, { param });
  const { model, provider: rawProvider, voice: rawVoice, provider_options, input, format, fallbacks: rawFallbacks, cache, pronunciation_dictionaries } = value;
  if (typeof model !== "string" || !model) throw new ApiError("model_required", `${param}.model is required`, { param: `${param}.model` });
  const provider = shortText(rawProvider, `${param}.provider`);
  const voice = shortText(rawVoice, `${param}.voice`);
  const bindings = catalogue.lookup(model, capability).filter((b) => b.streaming && (provider === undefined || b.provider.id === provider));
  if (bindings.length === 0)
    throw new ApiError("model_not_found", `${model} is not a streaming ${capability} model${provider === undefined ? "" : ` of ${provider}`} in this service`, { param: `${param}.model` });
  if (input !== undefined && (!isObject(input) || JSON.stringify(input).length > LIMITS.input))
    throw new ApiError("invalid_request", `${param}.input must be an object of at most ${LIMITS.input} bytes of JSON`, { param: `${param}.input` });
  if (isObject(input) && input.fallbacks !== undefined)
    throw new ApiError("invalid_request", `${param}.input.fallbacks is not read: the stage's fallbacks are ${param}.fallbacks`, { param: `${param}.input.fallbacks` });
  const fallbacks = stageFallbacks(catalogue, rawFallbacks, capability, param);
  if (format !== undefined && (capability !== "tts" || typeof format !== "string" || !(format in OUTPUT_FORMATS)))
    throw new ApiError(
      "invalid_request",
      capability === "tts"
        ? `${param}.format must be one of ${Object.keys(OUTPUT_FORMATS).join(", ")}`
        : `${param}.format is not a member of the STT stage (the input format is ${param}.input.audio_format)`,
      {
        param: `${param}.format`,
      },
    );
  if (cache !== undefined && (capability !== "tts" || typeof cache !== "boolean"))
    throw new ApiError("invalid_request", capability === "tts" ? `${param}.cache must be true or false` : `${param}.cache is not a member of the STT stage`, { param: `${param}.cache` });
  if (pronunciation_dictionaries !== undefined && capability !== "tts")
    throw new ApiError("invalid_request", `${param}.pronunciation_dictionaries is a member of the TTS stage`, { param: `${param}.pronunciation_dictionaries` });
  const dictionaries = locatorsOfBody(pronunciation_dictionaries, `${param}.pronunciation_dictionaries`);
  return {
    model,
    ...(cache === false ? { cache } : {}),
    ...(provider ? { provider } : {}),
    ...(dictionaries.length ? { pronunciation_dictionaries: dictionaries.map((d) => ({ pronunciation_dictionary_id: d.id, ...(d.versionId ? { version_id: d.versionId } : {}) })) } : {}),
    ...(voice ? { voice } : {}),
    ...(format ? { format } : {}),
    provider_options: stringMap(provider_options, `${param}.provider_options`),
    input: input ?? {},
    ...(fallbacks ? { fallbacks } : {}),
  };
}

/**
 * A stage's fallback models, each routed as a conversation would route it (streaming; TTS as PCM,
 * with its voice where its provider needs one): one that cannot serve is refused naming it
 * (`pipeline.tts.fallbacks[1].voice`). Voices are judged against the providers' lists when a
 * conversation starts, as the stage's own voice is.
 */
function stageFallbacks(catalogue: Catalogue, value: unknown, capability: Capability, param: string): ModelChoice[] | undefined {
  const fallbacks = fallbacksOf(value, capability, `${param}.fallbacks`);
  fallbacks?.forEach(({ model, voice }, i) => {
    if (model.length > LIMITS.text) throw new ApiError("invalid_request", `${param}.fallbacks[${i}].model is longer than ${LIMITS.text} characters`, { param: `${param}.fallbacks[${i}].model` });
    shortText(voice, `${param}.fallbacks[${i}].voice`);
    try {
      resolve(catalogue, { capability, model, voice, mode: "streaming", preferences: NO_PREFERENCES, ...(capability === "tts" ? { format: "pcm" } : {}) });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const member = `${param}.fallbacks[${i}].${err.code === "voice_required" ? "voice" : "model"}`;
      throw new ApiError(err.code, `${member}: ${err.message}`, { param: member }, err.status);
    }
  });
  return fallbacks;
}

/**
 * A create request's pipeline, checked against the catalogue; the application URL against the SSRF
 * guard's literal rules (`allowPrivateUpstreams`: REALTIME_ALLOW_PRIVATE_UPSTREAMS). Throws `ApiError`.
 */
export function parsePipeline(catalogue: Catalogue, value: unknown, allowPrivateUpstreams: boolean): Pipeline {
  if (!isObject(value)) throw new ApiError("invalid_request", "pipeline must be an object", { param: "pipeline" });
  const upstream = value.upstream;
  if (!isObject(upstream) || typeof upstream.url !== "string") throw new ApiError("invalid_request", "pipeline.upstream.url is required", { param: "pipeline.upstream.url" });
  if (upstream.url.length > LIMITS.url) throw new ApiError("invalid_request", `pipeline.upstream.url is longer than ${LIMITS.url} characters`, { param: "pipeline.upstream.url" });
  let url: URL;
  try {
    url = new URL(upstream.url);
  } catch {
    throw new ApiError("invalid_request", "pipeline.upstream.url is not a URL", { param: "pipeline.upstream.url" });
  }
  const refusal = literalRefusal(url, allowPrivateUpstreams);
  if (refusal) throw new ApiError("invalid_request", `pipeline.upstream.url ${refusal}`, { param: "pipeline.upstream.url" });
  const { partial_prompts, greeting } = { partial_prompts: upstream.partial_prompts, greeting: value.greeting };
  if (partial_prompts !== undefined && typeof partial_prompts !== "boolean")
    throw new ApiError("invalid_request", "pipeline.upstream.partial_prompts must be a boolean", { param: "pipeline.upstream.partial_prompts" });
  const protocol = upstream.protocol;
  if (protocol !== undefined && !APP_PROTOCOLS.includes(protocol as AppProtocol))
    throw new ApiError("invalid_request", `pipeline.upstream.protocol must be one of ${APP_PROTOCOLS.join(", ")}`, { param: "pipeline.upstream.protocol" });
  if (greeting !== undefined && (typeof greeting !== "string" || !greeting.trim() || greeting.length > LIMITS.greeting))
    throw new ApiError("invalid_request", `pipeline.greeting must be a string of 1 to ${LIMITS.greeting} characters`, { param: "pipeline.greeting" });
  return {
    stt: stage(catalogue, value.stt, "stt"),
    tts: stage(catalogue, value.tts, "tts"),
    upstream: {
      url: upstream.url,
      headers: headers(upstream.headers),
      ...(partial_prompts !== undefined ? { partial_prompts } : {}),
      ...(protocol !== undefined ? { protocol: protocol as AppProtocol } : {}),
    },
    ...(greeting !== undefined ? { greeting } : {}),
  };
}

/** The pipeline as the key creating it keeps it: a Speech Engine application's token is signed with that key. */
export function createdWith(pipeline: Pipeline, keyId: string): Pipeline {
  return pipeline.upstream.protocol === "speech_engine" ? { ...pipeline, upstream: { ...pipeline.upstream, signing_key_id: keyId } } : pipeline;
}

export class RealtimeProfiles {
  constructor(private readonly database: Database) {}

  async create(tenantId: string, name: unknown, pipeline: Pipeline): Promise<RealtimeProfile> {
    if (typeof name !== "string" || !name.trim() || name.length > 200) throw new ApiError("invalid_request", "name must be a string of 1 to 200 characters", { param: "name" });
    const { db, schema } = this.database;
    const [{ n }] = await db.select({ n: count() }).from(schema.realtimeProfiles).where(eq(schema.realtimeProfiles.tenantId, tenantId));
    if (Number(n) >= PROFILES_PER_TENANT) throw new ApiError("invalid_request", `a tenant keeps at most ${PROFILES_PER_TENANT} realtime profiles`);
    const now = new Date();
    // A time-ordered id (UUIDv7, monotonic in this process): profiles made in the same millisecond still list newest first.
    const row = { id: `rp_${Bun.randomUUIDv7().replaceAll("-", "")}`, tenantId, name: name.trim(), pipeline: JSON.stringify(pipeline), revision: 1, createdAt: now, updatedAt: now };
    // Every write takes the database's write turn: on SQLite a bare write here could wait on the ledger worker's open transaction, which waits on this thread.
    await this.database.transaction((tx) => tx.insert(schema.realtimeProfiles).values(row));
    return view(row);
  }

  /** The tenant's profiles, newest first, `limit` after the cursor (the last one's creation time and id). */
  async list(tenantId: string, limit: number, after?: { t: number; id: string }): Promise<{ items: RealtimeProfile[]; next: { t: number; id: string } | null }> {
    const { db, schema } = this.database;
    const t = schema.realtimeProfiles;
    const older = after ? or(lt(t.createdAt, new Date(after.t)), and(eq(t.createdAt, new Date(after.t)), lt(t.id, after.id))) : undefined;
    const rows = await db
      .select()
      .from(t)
      .where(and(eq(t.tenantId, tenantId), older))
      .orderBy(desc(t.createdAt), desc(t.id))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { items: page.map(view), next: rows.length > limit && last ? { t: last.createdAt.getTime(), id: last.id } : null };
  }

  /** The tenant's profile; another tenant's is as absent as an unknown one (404). */
  async get(tenantId: string, id: string): Promise<RealtimeProfile> {
    const { db, schema } = this.database;
    const t = schema.realtimeProfiles;
    const [row] = await db
      .select()
      .from(t)
      .where(and(eq(t.id, id), eq(t.tenantId, tenantId)));
    if (!row) throw new ApiError("not_found", `no realtime profile ${id}`);
    return view(row);
  }
}

function view(row: { id: string; name: string; pipeline: string; revision: number; createdAt: Date; updatedAt: Date }): RealtimeProfile {
  return {
    id: row.id,
    object: "realtime.profile",
    type: "pipeline",
    name: row.name,
    pipeline: JSON.parse(row.pipeline) as Pipeline,
    revision: row.revision,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
