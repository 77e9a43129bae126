import { ApiError } from "../errors.ts";
import type { CloneFile } from "../providers/types.ts";
import type { FormBody } from "./request-body.ts";

// The multipart form of a voice clone, as `/v1/custom-voices` and `/el/v1/voices/add` take it.

/** A text field of the form, trimmed; absent or empty is undefined. */
export function formField(form: FormBody, name: string): string | undefined {
  const v = form.get(name);
  return typeof v === "string" && v.trim() ? v.trim() : undefined;
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
