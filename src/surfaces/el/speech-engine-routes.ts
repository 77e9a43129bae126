import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { createdWith, parsePipeline, type PipelineStage, type RealtimeProfile } from "../../realtime/profiles.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { elAuth } from "./auth.ts";
import { isObject } from "../../util/is-object.ts";
import { publicBase } from "../public-base.ts";

// ElevenLabs Speech Engines are our realtime profiles seen through /el: the engine's `ws_url` and
// `request_headers` are the profile's application upstream, and the STT and TTS models are the
// extension block `service` (docs/compat-el.md). Creating an engine creates a profile, speaking
// ElevenLabs' Speech Engine protocol to the application unless `speech_engine.protocol` says
// `conversation_relay`.

function serviceStage(catalogue: AppContext["catalogue"], s: PipelineStage, capability: "stt" | "tts") {
  const provider = s.provider ?? catalogue.lookup(s.model, capability).find((b) => b.streaming)?.provider.id ?? "";
  return { model_id: s.model, provider, provider_options: s.provider_options, input: s.input, ...(s.voice ? { voice_id: s.voice } : {}), ...(s.fallbacks ? { fallbacks: s.fallbacks } : {}) };
}

/**
 * The Speech Engine object: the interface's fields, and ElevenLabs' own (empty where we have
 * nothing) so its SDK reads it; `conversation_url` is the socket that runs it (with a key, or
 * with `conversation_signature` from a signed URL).
 */
export function speechEngineOf(ctx: AppContext, p: RealtimeProfile, request: Request) {
  const base = publicBase(ctx, request).replace(/^http/, "ws");
  const created = Math.floor(Date.parse(p.created_at) / 1000);
  return {
    speech_engine_id: p.id,
    name: p.name,
    speech_engine: { ws_url: p.pipeline.upstream.url, request_headers: p.pipeline.upstream.headers, protocol: p.pipeline.upstream.protocol ?? "conversation_relay" },
    conversation_url: `${base}/el/v1/convai/conversation?agent_id=${encodeURIComponent(p.id)}`,
    service: { stt: serviceStage(ctx.catalogue, p.pipeline.stt, "stt"), tts: serviceStage(ctx.catalogue, p.pipeline.tts, "tts") },
    asr: {},
    tts: { model_id: p.pipeline.tts.model, ...(p.pipeline.tts.voice ? { voice_id: p.pipeline.tts.voice } : {}) },
    turn: {},
    vad: {},
    conversation: {},
    privacy: {},
    call_limits: {},
    language: "en",
    cascade_timeout_seconds: 0,
    tags: [],
    overrides: {},
    metadata: { created_at_unix_secs: created, updated_at_unix_secs: Math.floor(Date.parse(p.updated_at) / 1000) },
  };
}

/**
 * An ElevenLabs create body onto a pipeline: `speech_engine` gives the upstream, `service` the
 * models (the SDK sends it through `additionalBodyParameters`); without `service.tts`, ElevenLabs'
 * own `tts.model_id` / `tts.voice_id` are read.
 */
function pipelineOf(body: Record<string, unknown>): unknown {
  const engine = body.speech_engine;
  if (!isObject(engine) || typeof engine.ws_url !== "string") throw new ApiError("invalid_request", "speech_engine.ws_url is required", { param: "speech_engine.ws_url" });
  const service = isObject(body.service) ? body.service : {};
  const stage = (s: unknown) =>
    isObject(s) ? { model: s.model_id, provider: s.provider, voice: s.voice_id, provider_options: s.provider_options, input: s.input, fallbacks: s.fallbacks } : undefined;
  if (!isObject(service.stt)) throw new ApiError("model_required", "service.stt.model_id is required: the STT model of the engine", { param: "service.stt.model_id" });
  return { stt: stage(service.stt), tts: stage(service.tts ?? body.tts), upstream: { url: engine.ws_url, headers: engine.request_headers, protocol: engine.protocol ?? "speech_engine" } };
}

/**
 * A create's pipeline, its refusals naming the members the engine's body has (`service.tts.fallbacks[0].voice`,
 * `service.stt.model_id`, `speech_engine.ws_url`), not the profile's it was read into.
 */
function enginePipeline(ctx: AppContext, body: Record<string, unknown>) {
  try {
    return parsePipeline(ctx.catalogue, pipelineOf(body), ctx.config.realtime.allowPrivateUpstreams);
  } catch (err) {
    if (!(err instanceof ApiError) || typeof err.extra.param !== "string") throw err;
    const tts = isObject(body.service) && body.service.tts !== undefined ? "service.tts" : "tts";
    const rename = (text: string) =>
      text
        .replace(/\bpipeline\.upstream\.url\b/g, "speech_engine.ws_url")
        .replace(/\bpipeline\.upstream\.headers\b/g, "speech_engine.request_headers")
        .replace(/\bpipeline\.upstream\.protocol\b/g, "speech_engine.protocol")
        .replace(/\bpipeline\.(stt|tts)\.(model|voice)\b(?!\.|\[)/g, (_, stage: string, member: string) => `${stage === "tts" ? tts : "service.stt"}.${member}_id`)
        .replace(/\bpipeline\.(stt|tts)\b/g, (_, stage: string) => (stage === "tts" ? tts : "service.stt"));
    throw new ApiError(err.code, rename(err.message), { ...err.extra, param: rename(err.extra.param) }, err.status);
  }
}

export function elevenLabsSpeechEngineRoutes(ctx: AppContext) {
  return new Elysia()
    .use(elAuth(ctx))
    .post(
      "/v1/speech-engine",
      async ({ request, principal: { tenantId, keyId } }) => {
        const body = await jsonBody(request, BODY_LIMITS.profile);
        if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
        const profile = await ctx.profiles.create(tenantId, body.name ?? "speech engine", createdWith(enginePipeline(ctx, body), keyId));
        return speechEngineOf(ctx, profile, request);
      },
      { parse: "none" },
    )
    .get("/v1/speech-engine/:speech_engine_id", async ({ principal, params, request }) => speechEngineOf(ctx, await ctx.profiles.get(principal.tenantId, params.speech_engine_id), request));
}
