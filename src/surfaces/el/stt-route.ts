import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOfText } from "../../planning/fallbacks.ts";
import { planSttFile } from "../../planning/plan-stt-file.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { transcribeFile, type FileTranscription } from "../../sessions/file-transcription.ts";
import { toMillisecond } from "../../util/milliseconds.ts";
import { formBody } from "../request-body.ts";
import { elAuth } from "./auth.ts";
import { providerOfModel } from "./model.ts";

// `POST /el/v1/speech-to-text`: ElevenLabs' multipart request onto file transcription.

/** Scribe fields that change nothing here: accepted so that SDK calls work unchanged. */
const IGNORED = ["tag_audio_events", "num_speakers", "timestamps_granularity", "diarize", "diarization_threshold", "file_format", "temperature", "seed", "use_multi_channel", "enable_logging"];

/**
 * Words with times. File transcription keeps segment times only, so each segment's words are
 * spread evenly over it (estimates, as docs/compat-el.md says), separated by `spacing` entries as
 * Scribe does.
 */
function words(t: FileTranscription) {
  const out: { text: string; start: number; end: number; type: "word" | "spacing"; logprob: number }[] = [];
  for (const s of t.segments) {
    const parts = s.text.trim().split(/\s+/).filter(Boolean);
    const step = (s.end_ms - s.start_ms) / Math.max(1, parts.length) / 1000;
    const boundary = (i: number) => toMillisecond(s.start_ms / 1000 + i * step);
    parts.forEach((word, i) => {
      const start = boundary(i);
      if (out.length) out.push({ text: " ", start, end: start, type: "spacing", logprob: 0 });
      out.push({ text: word, start, end: boundary(i + 1), type: "word", logprob: 0 });
    });
  }
  return out;
}

export function elevenLabsSttRoute(ctx: AppContext) {
  return new Elysia().use(elAuth(ctx)).post(
    "/v1/speech-to-text",
    async ({ request, principal }) => {
      if (!(request.headers.get("content-type") ?? "").startsWith("multipart/form-data"))
        throw new ApiError("invalid_request", "send the audio as multipart/form-data with a file field", { param: "file" });
      const form = await formBody(request, ctx.config.maxAudioUploadBytes);
      const text = (name: string) => {
        const v = form.get(name);
        return typeof v === "string" && v ? v : undefined;
      };
      for (const key of form.keys())
        if (!["file", "model_id", "language_code", "cloud_storage_url", "fallbacks", ...IGNORED].includes(key)) throw new ApiError("invalid_request", `${key} is not a known field`, { param: key });
      if (text("cloud_storage_url")) throw new ApiError("invalid_request", "cloud_storage_url is not offered here: send the file", { param: "cloud_storage_url" });
      const file = form.get("file");
      if (!(file instanceof Blob)) throw new ApiError("invalid_request", "file is required", { param: "file" });
      const modelId = text("model_id");
      const provider = providerOfModel(ctx.catalogue, modelId, "stt", new URL(request.url).searchParams);
      const language = text("language_code");
      const plan = planSttFile(ctx.catalogue, (id) => ctx.sttProviders.get(id), {
        model: modelId,
        provider: provider || undefined,
        language,
        preferences: preferencesFromQuery(new URL(request.url).searchParams),
        fallbacks: fallbacksOfText(form.getAll("fallbacks"), "stt"),
      });
      const t = await transcribeFile(ctx, principal, {
        bytes: new Uint8Array(await file.arrayBuffer()),
        mimeType: file.type || undefined,
        language,
        plan,
        surface: "el",
        signal: request.signal,
      });
      return { language_code: t.language ?? "", language_probability: t.language ? 1 : 0, text: t.text, words: words(t), transcription_id: t.id, audio_duration_secs: t.durationSeconds };
    },
    { parse: "none" },
  );
}
