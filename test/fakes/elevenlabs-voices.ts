import { cloneAudioProblem, SLOW_CLONE_MS, type CloningFault } from "./cloning.ts";

// The ElevenLabs fake's voices: the premade one, and instant clones made, read and deleted as the
// official SDK does (`voices.ivc.create`, `voices.get`, `voices.delete`): `POST /v1/voices/add`
// (multipart `name`, `files` repeated, `description`, `labels` as JSON, `remove_background_noise`)
// answers `{voice_id, requires_verification}`; a clone is listed by `GET /v1/voices` and read by
// `GET /v1/voices/{id}` until `DELETE /v1/voices/{id}` (`{status: "ok"}`) takes it away.
//
// Refusals as ElevenLabs words them: a missing field is FastAPI's 422 `{detail: [{loc, msg, type}]}`;
// a recording that is empty, not audio or under a second is 400 with its message. A voice the fake
// does not have is 404 `voice_not_found` on reads, 400 `voice_does_not_exist` on deletion (ElevenLabs
// has answered both ways).
//
// Cloning faults (the fake's `fault(...)`, for the next request): "slow" answers a clone after
// SLOW_CLONE_MS; "verifying" makes a clone that `requires_verification` and reads as unverified for
// VERIFYING_MS, then as verified; "malformed" answers a clone with HTML. "401", "429" and "500" are
// answered before any of this, as for every route of the fake.

export type ElevenLabsCloningFault = CloningFault | "verifying";

export const VERIFYING_MS = 400;

export interface ClonedVoiceRecord {
  voiceId: string;
  name: string;
  description?: string;
  labels: Record<string, string>;
  removeBackgroundNoise?: string;
  files: { name: string; type: string; bytes: number }[];
  /** When ElevenLabs would have the speaker verified; undefined when no verification was asked. */
  verifiedAt?: number;
}

const detail = (status: number, code: string, message: string) => Response.json({ detail: { status: code, message } }, { status });
const missing = (field: string) => Response.json({ detail: [{ loc: ["body", field], msg: "Field required", type: "missing" }] }, { status: 422 });

/** `premade`: the account's own voices, a list the fake's user may change. */
export function elevenLabsVoices(premade: Record<string, unknown>[]) {
  const cloned = new Map<string, ClonedVoiceRecord>();

  const voiceJson = (v: ClonedVoiceRecord) => {
    const verifying = v.verifiedAt !== undefined;
    return {
      voice_id: v.voiceId,
      name: v.name,
      category: "cloned",
      labels: v.labels,
      ...(v.description !== undefined ? { description: v.description } : {}),
      samples: v.files.map((f, i) => ({ sample_id: `${v.voiceId}-${i}`, file_name: f.name, mime_type: f.type, size_bytes: f.bytes })),
      voice_verification: { requires_verification: verifying, is_verified: verifying && Date.now() >= v.verifiedAt!, verification_failures: [], verification_attempts_count: 0 },
      is_owner: true,
    };
  };

  async function add(req: Request, fault: string | undefined): Promise<Response> {
    const form = await req.formData().catch(() => undefined);
    if (!form) return missing("name");
    const name = form.get("name");
    const files = form.getAll("files").filter((f) => f instanceof File) as File[];
    if (typeof name !== "string" || !name) return missing("name");
    if (!files.length) return missing("files");
    for (const file of files) {
      const problem = cloneAudioProblem(file.name, new Uint8Array(await file.arrayBuffer()));
      if (problem) return detail(400, "invalid_audio", `File upload is corrupted or unusable: ${problem}. Please ensure it is playable audio.`);
    }
    let labels: Record<string, string> = {};
    const rawLabels = form.get("labels");
    if (typeof rawLabels === "string" && rawLabels) {
      try {
        labels = JSON.parse(rawLabels);
      } catch {
        return detail(400, "invalid_labels", "labels must be a JSON object");
      }
    }
    if (fault === "slow") await Bun.sleep(SLOW_CLONE_MS);
    if (fault === "malformed") return new Response("<html>gateway</html>", { headers: { "content-type": "text/html" } });
    const description = form.get("description");
    const noise = form.get("remove_background_noise");
    const voice: ClonedVoiceRecord = {
      voiceId: crypto.randomUUID().replaceAll("-", "").slice(0, 20),
      name,
      labels,
      files: files.map((f) => ({ name: f.name, type: f.type, bytes: f.size })),
      ...(typeof description === "string" ? { description } : {}),
      ...(typeof noise === "string" ? { removeBackgroundNoise: noise } : {}),
      ...(fault === "verifying" ? { verifiedAt: Date.now() + VERIFYING_MS } : {}),
    };
    cloned.set(voice.voiceId, voice);
    return Response.json({ voice_id: voice.voiceId, requires_verification: fault === "verifying" });
  }

  return {
    /** The clones the fake holds, by voice id. */
    cloned,
    list: () => ({ voices: [...premade, ...[...cloned.values()].map(voiceJson)] }),
    /** The answer to a voices request other than the list; undefined for any other path. */
    async route(req: Request, path: string, fault: string | undefined): Promise<Response | undefined> {
      if (req.method === "POST" && path === "/v1/voices/add") return add(req, fault);
      const id = /^\/v1\/voices\/([^/]+)$/.exec(path)?.[1];
      if (!id || (req.method !== "GET" && req.method !== "DELETE")) return undefined;
      const voice = cloned.get(decodeURIComponent(id));
      if (req.method === "GET") {
        const own = premade.find((v) => v.voice_id === decodeURIComponent(id));
        if (own) return Response.json(own);
        return voice ? Response.json(voiceJson(voice)) : detail(404, "voice_not_found", `A voice with the voice_id ${id} was not found.`);
      }
      if (!voice) return detail(400, "voice_does_not_exist", `A voice with voice_id ${id} does not exist.`);
      cloned.delete(voice.voiceId);
      return Response.json({ status: "ok" });
    },
  };
}
