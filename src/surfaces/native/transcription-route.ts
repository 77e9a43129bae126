import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../../accounts/keys.ts";
import { probeDuration } from "../../audio/probe.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { ProviderError } from "../../providers/types.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { resolve } from "../../routing/resolve.ts";

// `POST /v1/stt/transcriptions`: one audio file in, its transcript out (see docs/stt-files.md).
// The file comes as multipart (`file` and the fields) or as the raw body with its Content-Type,
// the fields then in the query.

const FIELDS = ["model", "language", "provider", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks"];

async function readRequest(request: Request): Promise<{ bytes: Uint8Array; mimeType?: string; params: URLSearchParams }> {
  const params = new URL(request.url).searchParams;
  const type = request.headers.get("content-type") ?? "";
  if (type.startsWith("multipart/form-data")) {
    let form: Awaited<ReturnType<Request["formData"]>>;
    try {
      form = await request.formData();
    } catch {
      throw new ApiError("invalid_request", "the multipart body cannot be read");
    }
    for (const [key, value] of form) if (typeof value === "string" && FIELDS.includes(key)) params.append(key, value);
    const file = form.get("file");
    if (!(file instanceof Blob)) throw new ApiError("invalid_request", "the multipart body needs a file field", { param: "file" });
    return { bytes: new Uint8Array(await file.arrayBuffer()), mimeType: file.type || undefined, params };
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0) throw new ApiError("invalid_request", "send the audio as the body, or as multipart with a file field", { param: "file" });
  return { bytes, mimeType: type.startsWith("audio/") || type.startsWith("video/") ? type.split(";")[0] : undefined, params };
}

export function transcriptionRoute(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["stt"] } }).post(
    "/v1/stt/transcriptions",
    async ({ request }) => {
      // 401/403 first, then what the request says, then its price: all before any upstream work.
      const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
      const { bytes, mimeType, params } = await readRequest(request);
      for (const key of params.keys()) if (!FIELDS.includes(key)) throw new ApiError("invalid_request", `${key} is not a known parameter`, { param: key });
      const routed = resolve(ctx.catalogue, {
        capability: "stt",
        model: params.get("model") ?? undefined,
        provider: params.get("provider") || undefined,
        mode: "synchronous",
        preferences: preferencesFromQuery(params),
      });
      const candidates = routed.filter((b) => ctx.sttProviders.get(b.provider.id)?.transcribe);
      if (candidates.length === 0) throw new ApiError("no_matching_provider", `no provider in this build transcribes files with ${params.get("model")}`);
      const probe = await probeDuration(bytes, mimeType);
      const seconds = Math.ceil(probe.seconds);
      const admitted = await ctx.meter.admit(principal, candidates);

      const id = `stt_file_${crypto.randomUUID()}`;
      const meter = ctx.meter.start(id, principal, "native");
      const startedAt = new Date();
      const t0 = performance.now();
      const attempts: { provider: string; reason: string }[] = [];
      if (!(await meter.cover(admitted[0], seconds))) {
        await meter.settle({ binding: admitted[0], status: "failed", units: 0, startedAt, latencyMs: 0, attempts });
        throw new ApiError("insufficient_balance", `the balance cannot pay for ${seconds} s of audio`);
      }
      for (const binding of admitted) {
        let result;
        try {
          result = await ctx.sttProviders.get(binding.provider.id)!.transcribe!({ model: binding.id, bytes, container: probe.container, mimeType, language: params.get("language") ?? undefined });
        } catch (err) {
          attempts.push({ provider: binding.provider.id, reason: (err as Error).message });
          const retry = err instanceof ProviderError && err.retryable && binding !== admitted.at(-1);
          if (retry) continue;
          await meter.settle({ binding, status: "failed", units: 0, startedAt, latencyMs: performance.now() - t0, attempts });
          if (err instanceof ApiError) throw err;
          if (err instanceof ProviderError && !err.retryable) throw new ApiError("validation", err.message);
          throw new ApiError("upstream_error", (err as Error).message);
        }
        // Settled once, outside the provider's try: a ledger failure is not a provider failure.
        await meter.settle({ binding, status: "completed", units: seconds, startedAt, latencyMs: performance.now() - t0, attempts });
        return {
            id,
            text: result.text,
            segments: result.segments,
            duration_seconds: probe.seconds,
            billed_seconds: seconds,
            provider: binding.provider.id,
            model: binding.canonical,
          };
      }
      throw new ApiError("upstream_error", "no provider could transcribe the file");
    },
    { parse: "none", detail: { summary: "Transcribe an audio file (multipart or raw body)" } },
  );
}
