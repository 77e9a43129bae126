import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOfText } from "../../planning/fallbacks.ts";
import { planSttFile } from "../../planning/plan-stt-file.ts";
import { preferencesFromBody } from "../../routing/preferences.ts";
import { STREAMED_ANSWER } from "../../limits/counters.ts";
import { allowStalledReader } from "../stalled-readers.ts";
import { transcribeFile, type FileTranscription } from "../../sessions/file-transcription.ts";
import { formBody, type FormBody } from "../request-body.ts";
import { toSrt, toVtt, type TimedText } from "../subtitles.ts";
import { oaiAuth } from "./auth.ts";
import { streamTranscription } from "./transcription-stream.ts";

// `POST /oai/audio/transcriptions`: the OpenAI multipart request onto file transcription, its
// answer whole or (`stream: true`) as server-sent events.

/** OpenAI fields that change nothing here: accepted so that SDK calls work unchanged. */
const IGNORED = ["prompt", "temperature", "timestamp_granularities[]", "timestamp_granularities", "include[]", "include", "chunking_strategy"];
const FIELDS = ["file", "model", "language", "response_format", "stream", "provider", "fallbacks", ...IGNORED];

async function readForm(request: Request, limit: number): Promise<FormBody> {
  if (!(request.headers.get("content-type") ?? "").startsWith("multipart/form-data"))
    throw new ApiError("invalid_request", "send the audio as multipart/form-data with a file field", { param: "file" });
  const form = await formBody(request, limit);
  for (const key of form.keys()) if (!FIELDS.includes(key)) throw new ApiError("invalid_request", `${key} is not a known parameter`, { param: key });
  return form;
}

function field(form: FormBody, name: string): string | undefined {
  const v = form.get(name);
  return typeof v === "string" && v ? v : undefined;
}

function providerField(form: FormBody): unknown {
  const raw = field(form, "provider");
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError("invalid_request", "provider must be a JSON object", { param: "provider" });
  }
}

/** Segments for subtitles: the provider's, or the whole text as one cue. */
function cues(t: FileTranscription): TimedText[] {
  if (t.segments.length) return t.segments;
  return t.text ? [{ text: t.text, start_ms: 0, end_ms: Math.round(t.durationSeconds * 1000) }] : [];
}

const text = (body: string, type: string) => new Response(body, { headers: { "content-type": `${type}; charset=utf-8` } });

function render(format: string, t: FileTranscription): unknown {
  const usage = { type: "duration", seconds: t.billedSeconds };
  switch (format) {
    case "json":
      return { text: t.text, usage };
    case "text":
      return text(t.text, "text/plain");
    case "srt":
      return text(toSrt(cues(t)), "application/x-subrip");
    case "vtt":
      return text(toVtt(cues(t)), "text/vtt");
    default:
      return {
        task: "transcribe",
        language: t.language ?? "",
        duration: t.durationSeconds,
        text: t.text,
        segments: t.segments.map((s, id) => ({
          id,
          seek: 0,
          start: s.start_ms / 1000,
          end: s.end_ms / 1000,
          text: s.text,
          tokens: [],
          temperature: 0,
          avg_logprob: 0,
          compression_ratio: 0,
          no_speech_prob: 0,
        })),
        usage,
      };
  }
}

const FORMATS = ["json", "text", "srt", "vtt", "verbose_json"];
/** With `stream: true` the events are the answer; OpenAI streams only these. */
const STREAM_FORMATS = ["json", "text"];

export function oaiTranscriptionRoute(ctx: AppContext) {
  return new Elysia().use(oaiAuth(ctx)).post(
    "/audio/transcriptions",
    async ({ request, server, principal }) => {
      const form = await readForm(request, ctx.config.maxAudioUploadBytes);
      const file = form.get("file");
      if (!(file instanceof Blob)) throw new ApiError("missing_required_parameter", "you must provide file", { param: "file" });
      const model = field(form, "model");
      if (!model) throw new ApiError("missing_required_parameter", "you must provide model", { param: "model" });
      const format = field(form, "response_format") ?? "json";
      if (!FORMATS.includes(format)) throw new ApiError("invalid_request", `response_format must be one of ${FORMATS.join(", ")}`, { param: "response_format" });
      const stream = field(form, "stream") === "true";
      if (stream && !STREAM_FORMATS.includes(format)) throw new ApiError("invalid_request", `with stream, response_format must be one of ${STREAM_FORMATS.join(", ")}`, { param: "response_format" });
      const language = field(form, "language");
      const plan = planSttFile(ctx.catalogue, (id) => ctx.sttProviders.get(id), {
        model,
        language,
        preferences: preferencesFromBody(providerField(form)),
        fallbacks: fallbacksOfText(form.getAll("fallbacks"), "stt"),
        live: stream,
      });
      const job = { bytes: new Uint8Array(await file.arrayBuffer()), mimeType: file.type || undefined, language, plan, surface: "oai" };
      if (stream) {
        // A streamed answer counts against `max_sessions` until its transcript is done.
        const lease = await ctx.limits.admit(principal, STREAMED_ANSWER);
        allowStalledReader(ctx, server, request);
        return streamTranscription((onSegment) => transcribeFile(ctx, principal, { ...job, live: { onSegment }, signal: request.signal }).finally(() => lease?.release()), request.signal);
      }
      return render(format, await transcribeFile(ctx, principal, { ...job, signal: request.signal }));
    },
    { parse: "none" },
  );
}
