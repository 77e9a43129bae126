import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { isObject } from "../../util/is-object.ts";
import { formField, recordingsOf } from "../clone-form.ts";
import { formBody } from "../request-body.ts";
import { voiceIdIn } from "../voice-id.ts";
import { elAuth } from "./auth.ts";

// ElevenLabs' instant voice cloning (`voices.ivc.create`, `voices.delete` in the SDK) onto
// `/v1/custom-voices` (docs/voices.md#cloned-voices). The voice is cloned by ElevenLabs when this
// deployment has it, else by the first provider here that can clone.

/** The provider an `/el` clone goes to. */
function clonerOf(ctx: AppContext): string {
  const able = ctx.customVoices.cloners();
  const provider = able.includes("elevenlabs") ? "elevenlabs" : able[0];
  if (!provider) throw new ApiError("invalid_request", "no provider of this deployment can clone voices");
  return provider;
}

/** `labels` is a JSON object of strings; its `language` is the voice's. */
function languageOf(labels: string | undefined): string | undefined {
  if (!labels) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(labels);
  } catch {
    throw new ApiError("invalid_request", "labels must be a JSON object", { param: "labels" });
  }
  if (!isObject(parsed)) throw new ApiError("invalid_request", "labels must be a JSON object", { param: "labels" });
  return typeof parsed.language === "string" && parsed.language ? parsed.language : undefined;
}

export function elevenLabsVoiceCloningRoutes(ctx: AppContext) {
  return new Elysia()
    .use(elAuth(ctx))
    .post(
      "/v1/voices/add",
      async ({ request, principal }) => {
        const form = await formBody(request, ctx.config.maxAudioUploadBytes);
        const name = formField(form, "name");
        if (!name) throw new ApiError("invalid_request", "name is required", { param: "name" });
        const description = formField(form, "description");
        const language = languageOf(formField(form, "labels"));
        const row = await ctx.customVoices.create(principal, {
          name,
          provider: clonerOf(ctx),
          files: await recordingsOf(form),
          ...(description ? { description } : {}),
          ...(language ? { language } : {}),
        });
        return { voice_id: row.id, requires_verification: false };
      },
      { parse: "none" },
    )
    .delete(
      "/v1/voices/*",
      async ({ request, principal }) => {
        await ctx.customVoices.remove(principal.tenantId, voiceIdIn(request, "/el/v1/voices/"));
        return { status: "ok" };
      },
      { parse: "none" },
    );
}
