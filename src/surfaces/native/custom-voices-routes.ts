import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { CloneInput } from "../../voices/custom-voices.ts";
import { customVoiceView } from "../../voices/custom-voice-view.ts";
import { formField, recordingsOf } from "../clone-form.ts";
import { voiceIdIn } from "../voice-id.ts";
import { type FormBody, formBody } from "../request-body.ts";
import { nativeAuth } from "./auth.ts";

// `/v1/custom-voices` (docs/voices.md#cloned-voices): clone a voice from recordings of a speaker,
// then read, list or delete the tenant's cloned voices. Ids are taken verbatim from the path
// (provider ids may hold colons and at-signs), percent-escapes decoded, 1–120 characters.

async function cloneInputOf(form: FormBody): Promise<CloneInput> {
  const name = formField(form, "name");
  const provider = formField(form, "provider");
  if (!name) throw new ApiError("invalid_request", "name is required", { param: "name" });
  if (!provider) throw new ApiError("invalid_request", "provider is required: the provider that clones and holds the voice", { param: "provider" });
  const optional = Object.fromEntries((["model", "description", "language"] as const).map((k) => [k, formField(form, k)]).filter(([, v]) => v));
  return { name, provider, files: await recordingsOf(form), ...optional };
}

export function customVoiceRoutes(ctx: AppContext) {
  return new Elysia()
    .use(nativeAuth(ctx))
    .post(
      "/v1/custom-voices",
      async ({ request, principal, set }) => {
        const input = await cloneInputOf(await formBody(request, ctx.config.maxAudioUploadBytes));
        const row = await ctx.customVoices.create(principal, input);
        set.status = 201;
        return customVoiceView(ctx.catalogue, row);
      },
      { parse: "none" },
    )
    .get("/v1/custom-voices", async ({ principal }) => {
      const rows = await ctx.customVoices.list(principal.tenantId);
      return { voices: rows.flatMap((row) => customVoiceView(ctx.catalogue, row).voices), total_count: rows.length, has_more: false, next_cursor: null };
    })
    .get("/v1/custom-voices/*", async ({ request, principal }) => customVoiceView(ctx.catalogue, await ctx.customVoices.get(principal.tenantId, voiceIdIn(request, "/v1/custom-voices/"))))
    .delete(
      "/v1/custom-voices/*",
      async ({ request, principal, set }) => {
        await ctx.customVoices.remove(principal.tenantId, voiceIdIn(request, "/v1/custom-voices/"));
        set.status = 204;
        return null;
      },
      { parse: "none" },
    );
}
