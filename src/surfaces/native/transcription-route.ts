import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOfText } from "../../planning/fallbacks.ts";
import { planSttFile } from "../../planning/plan-stt-file.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { transcribeFile } from "../../sessions/file-transcription.ts";
import { formBody, readBody } from "../request-body.ts";
import { nativeAuth } from "./auth.ts";

// `POST /v1/stt/transcriptions`: one audio file in, its transcript out (see docs/stt-files.md).
// The file comes as multipart (`file` and the fields) or as the raw body with its Content-Type,
// the fields then in the query.

const FIELDS = ["model", "language", "provider", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks", "fallbacks"];

async function readRequest(request: Request, limit: number): Promise<{ bytes: Uint8Array; mimeType?: string; params: URLSearchParams }> {
  const params = new URL(request.url).searchParams;
  const type = request.headers.get("content-type") ?? "";
  if (type.startsWith("multipart/form-data")) {
    const form = await formBody(request, limit);
    for (const [key, value] of form) if (typeof value === "string" && FIELDS.includes(key)) params.append(key, value);
    const file = form.get("file");
    if (!(file instanceof Blob)) throw new ApiError("invalid_request", "the multipart body needs a file field", { param: "file" });
    return { bytes: new Uint8Array(await file.arrayBuffer()), mimeType: file.type || undefined, params };
  }
  const bytes = await readBody(request, limit);
  if (bytes.length === 0) throw new ApiError("invalid_request", "send the audio as the body, or as multipart with a file field", { param: "file" });
  return { bytes, mimeType: type.startsWith("audio/") || type.startsWith("video/") ? type.split(";")[0] : undefined, params };
}

export function transcriptionRoute(ctx: AppContext) {
  return new Elysia().use(nativeAuth(ctx)).post(
    "/v1/stt/transcriptions",
    async ({ request, principal }) => {
      // 401/403 first (nativeAuth), then what the request says, then its price: all before any upstream work.
      const { bytes, mimeType, params } = await readRequest(request, ctx.config.maxAudioUploadBytes);
      for (const key of params.keys()) if (!FIELDS.includes(key)) throw new ApiError("invalid_request", `${key} is not a known parameter`, { param: key });
      const language = params.get("language") ?? undefined;
      const plan = planSttFile(ctx.catalogue, (id) => ctx.sttProviders.get(id), {
        model: params.get("model") ?? undefined,
        provider: params.get("provider") || undefined,
        language,
        preferences: preferencesFromQuery(params),
        fallbacks: fallbacksOfText(params.getAll("fallbacks"), "stt"),
      });
      const t = await transcribeFile(ctx, principal, {
        bytes,
        mimeType,
        language,
        plan,
        surface: "native",
        signal: request.signal,
      });
      return { id: t.id, text: t.text, segments: t.segments, duration_seconds: t.durationSeconds, billed_seconds: t.billedSeconds, provider: t.provider, model: t.model };
    },
    { parse: "none" },
  );
}
