import { ApiError } from "../errors.ts";
import type { CloneFile } from "../providers/voice-cloning.ts";
import type { FormBody } from "./request-body.ts";

// The multipart form of a voice clone, as `/v1/custom-voices` and `/el/v1/voices/add` take it.

/**
 * The most characters each text field may have (docs/voices.md#cloned-voices): a name and a
 * description are stored and listed with the voice, so none may make every listing huge.
 */
export const CLONE_FIELD_LIMITS = { name: 100, description: 1000, language: 35, labels: 1000, provider: 200, model: 200 } as const;

/** A text field of the form, trimmed; absent or empty is undefined; past its limit, 400 naming it. */
export function formField(form: FormBody, name: keyof typeof CLONE_FIELD_LIMITS): string | undefined {
  const v = form.get(name);
  const text = typeof v === "string" ? v.trim() : "";
  const limit = CLONE_FIELD_LIMITS[name];
  if (text.length > limit) throw new ApiError("invalid_request", `${name} is longer than ${limit} characters`, { param: name });
  return text || undefined;
}

/** The speaker's recordings: one or more non-empty `files` (`files[]` and `file` are taken too). */
export async function recordingsOf(form: FormBody): Promise<CloneFile[]> {
  const blobs = [...form.getAll("files"), ...form.getAll("files[]"), ...form.getAll("file")].filter((f) => f instanceof Blob) as unknown as File[];
  if (!blobs.length) throw new ApiError("invalid_request", "send one or more recordings of the speaker as files", { param: "files" });
  const files: CloneFile[] = [];
  for (const blob of blobs) {
    if (!blob.size) throw new ApiError("invalid_request", `the file ${blob.name || "(unnamed)"} is empty`, { param: "files" });
    files.push({ name: blob.name || "sample", type: blob.type || "application/octet-stream", data: new Uint8Array(await blob.arrayBuffer()) });
  }
  return files;
}
