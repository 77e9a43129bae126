import { cloneAudioProblem, SLOW_CLONE_MS } from "./cloning.ts";

// The Cartesia fake's voices: its one public voice, and instant clones made, read and deleted as
// the official SDK does (`voices.clone`, `voices.get`, `voices.delete`): `POST /voices/clone`
// (multipart `clip`, `name`, `language`, `description`, `accent`, `base_voice_id`) answers the
// voice's metadata; a clone is listed by `GET /voices` (paged by `limit` and `starting_after`) and read by `GET /voices/{id}` until
// `DELETE /voices/{id}` (204) takes it away. A voice the fake does not have is 404.
//
// Refusals in Cartesia's error shape: a missing field 400, and a clip that is empty, not audio or
// under a second 400 `invalid_clip` with its reason.
//
// Cloning faults (the fake's `fault(...)`, for the next request): "slow" answers a clone after
// SLOW_CLONE_MS (a Cartesia clone is usable once answered, so there is no processing to wait for);
// "malformed" answers a clone with HTML. "401", "429" and "500" are answered before any of this.

export interface CartesiaCloneRecord {
  id: string;
  name: string;
  language: string;
  description: string;
  created_at: string;
  clip: { name: string; type: string; bytes: number };
  /** Every multipart text field as sent. */
  fields: Record<string, string>;
}

type Refuse = (status: number, code: string, message: string) => Response;

/** `premade`: the account's own voices, a list the fake's user may change. */
export function cartesiaVoices(premade: Record<string, unknown>[], refuse: Refuse) {
  const cloned = new Map<string, CartesiaCloneRecord>();

  /** What a clone is answered with (`VoiceMetadata`, less its `user_id`). */
  const metadata = (v: CartesiaCloneRecord) => ({
    id: v.id,
    name: v.name,
    description: v.description,
    language: v.language,
    created_at: v.created_at,
    access: "private",
    visibility: "owner",
    tagline: "",
  });
  const voiceJson = (v: CartesiaCloneRecord) => ({ ...metadata(v), is_owner: true, locales: [{ locale: v.language, is_native: true }] });

  async function clone(req: Request, fault: string | undefined): Promise<Response> {
    const form = await req.formData().catch(() => undefined);
    if (!form) return refuse(400, "invalid_request", "Expected a multipart/form-data body");
    const fields: Record<string, string> = {};
    for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
    const clip = form.get("clip");
    if (!(clip instanceof File)) return refuse(400, "invalid_request", "clip is required");
    if (!fields.name) return refuse(400, "invalid_request", "name is required");
    if (!fields.language) return refuse(400, "invalid_request", "language is required");
    const problem = cloneAudioProblem(clip.name, new Uint8Array(await clip.arrayBuffer()));
    if (problem) return refuse(400, "invalid_clip", `The clip could not be used: ${problem}`);
    if (fault === "slow") await Bun.sleep(SLOW_CLONE_MS);
    if (fault === "malformed") return new Response("<html>gateway</html>", { headers: { "content-type": "text/html" } });
    const voice: CartesiaCloneRecord = {
      id: crypto.randomUUID(),
      name: fields.name,
      language: fields.language,
      description: fields.description ?? "",
      created_at: new Date().toISOString(),
      clip: { name: clip.name, type: clip.type, bytes: clip.size },
      fields,
    };
    cloned.set(voice.id, voice);
    return Response.json({ ...metadata(voice), user_id: "user_fake" });
  }

  return {
    /** The clones the fake holds, by voice id. */
    cloned,
    has: (id: string) => premade.some((v) => v.id === id) || cloned.has(id),
    /** One page, as Cartesia pages: `limit` (10 unless said) voices after `starting_after`; the SDK asks on until a page is empty. */
    list(query: URLSearchParams) {
      const all: Record<string, unknown>[] = [...premade, ...[...cloned.values()].map(voiceJson)];
      const after = query.get("starting_after");
      const from = after ? all.findIndex((v) => v.id === after) + 1 : 0;
      const limit = Number(query.get("limit") ?? 10);
      const data = from > 0 || !after ? all.slice(from, from + limit) : [];
      return { data, has_more: from + data.length < all.length };
    },
    /** The answer to a voices request other than the list; undefined for any other path. */
    async route(req: Request, path: string, fault: string | undefined): Promise<Response | undefined> {
      if (req.method === "POST" && path === "/voices/clone") return clone(req, fault);
      const id = /^\/voices\/([^/]+)$/.exec(path)?.[1];
      if (!id || (req.method !== "GET" && req.method !== "DELETE")) return undefined;
      const voiceId = decodeURIComponent(id);
      const voice = cloned.get(voiceId);
      const own = premade.find((v) => v.id === voiceId);
      if (req.method === "GET" && own) return Response.json(own);
      if (!voice) return refuse(404, "voice_not_found", "Voice not found");
      if (req.method === "GET") return Response.json(voiceJson(voice));
      cloned.delete(voiceId);
      return new Response(null, { status: 204 });
    },
  };
}
