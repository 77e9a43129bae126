import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { CloneFile } from "../../providers/types.ts";
import type { CloneInput } from "../../voices/custom-voices.ts";
import { customVoiceView } from "../../voices/custom-voice-view.ts";
import { type FormBody, formBody } from "../request-body.ts";
import { nativeAuth } from "./auth.ts";

// `/v1/custom-voices` (docs/voices.md#cloned-voices): clone a voice from recordings of a speaker,
// then read, list or delete the tenant's cloned voices. Ids are taken verbatim from the path
// (provider ids may hold colons and at-signs), percent-escapes decoded, 1–120 characters.

const PREFIX = "/v1/custom-voices/";
const ID_LENGTH = { min: 1, max: 120 };

function voiceIdOf(request: Request): string {
  const raw = new URL(request.url).pathname.slice(PREFIX.length);
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new ApiError("invalid_request", "the voice id in the path is not valid percent-encoding", { param: "voice_id" });
  }
  if (id.length < ID_LENGTH.min || id.length > ID_LENGTH.max) throw new ApiError("invalid_request", `a voice id is ${ID_LENGTH.min} to ${ID_LENGTH.max} characters`, { param: "voice_id" });
  return id;
}

/** A text field of the form, trimmed; absent or empty is undefined. */
function field(form: FormBody, name: string): string | undefined {
  const v = form.get(name);
  return typeof v === "string" && v.trim() ? v.trim() : undefined;
}

async function cloneInputOf(form: FormBody): Promise<CloneInput> {
  const name = field(form, "name");
  const provider = field(form, "provider");
  if (!name) throw new ApiError("invalid_request", "name is required", { param: "name" });
  if (!provider) throw new ApiError("invalid_request", "provider is required: the provider that clones and holds the voice", { param: "provider" });
  const blobs = [...form.getAll("files"), ...form.getAll("files[]"), ...form.getAll("file")].filter((f) => f instanceof Blob) as unknown as File[];
  if (!blobs.length) throw new ApiError("invalid_request", "send one or more recordings of the speaker as files", { param: "files" });
  const files: CloneFile[] = [];
  for (const blob of blobs) {
    if (!blob.size) throw new ApiError("invalid_request", `the file ${blob.name || "(unnamed)"} is empty`, { param: "files" });
    files.push({ name: blob.name || "sample", type: blob.type || "application/octet-stream", data: new Uint8Array(await blob.arrayBuffer()) });
  }
  const optional = Object.fromEntries((["model", "description", "language"] as const).map((k) => [k, field(form, k)]).filter(([, v]) => v));
  return { name, provider, files, ...optional };
}

export function customVoiceRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["voices"] } })
    .use(nativeAuth(ctx))
    .post(
      "/v1/custom-voices",
      async ({ request, principal, set }) => {
        const input = await cloneInputOf(await formBody(request, ctx.config.maxAudioUploadBytes));
        const row = await ctx.customVoices.create(principal, input);
        set.status = 201;
        return customVoiceView(ctx.catalogue, row);
      },
      { parse: "none", detail: { summary: "Clone a voice from recordings (multipart: name, provider, files, model?, description?, language?)" } },
    )
    .get("/v1/custom-voices", async ({ principal }) => {
      const rows = await ctx.customVoices.list(principal.tenantId);
      return { voices: rows.flatMap((row) => customVoiceView(ctx.catalogue, row).voices), total_count: rows.length, has_more: false, next_cursor: null };
    })
    .get("/v1/custom-voices/*", async ({ request, principal }) => customVoiceView(ctx.catalogue, await ctx.customVoices.get(principal.tenantId, voiceIdOf(request))), {
      detail: { summary: "A cloned voice: its status and the speech models it can be used with" },
    })
    .delete("/v1/custom-voices/*", async ({ request, principal, set }) => {
      await ctx.customVoices.remove(principal.tenantId, voiceIdOf(request));
      set.status = 204;
      return null;
    });
}
