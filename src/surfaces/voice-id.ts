import { ApiError } from "../errors.ts";

// Voice ids in paths are taken verbatim (provider ids may hold colons and at-signs), with
// percent-escapes decoded: 1 to 120 characters.

const ID_LENGTH = { min: 1, max: 120 };

/** The rest of the path after `prefix`, as a voice id; 400 `invalid_request` naming `voice_id` when it cannot be one. */
export function voiceIdIn(request: Request, prefix: string): string {
  const raw = new URL(request.url).pathname.slice(prefix.length);
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new ApiError("invalid_request", "the voice id in the path is not valid percent-encoding", { param: "voice_id" });
  }
  if (id.length < ID_LENGTH.min || id.length > ID_LENGTH.max) throw new ApiError("invalid_request", `a voice id is ${ID_LENGTH.min} to ${ID_LENGTH.max} characters`, { param: "voice_id" });
  return id;
}
