import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";

// Every request body is read here, against the limit of its route: a declared Content-Length over
// the limit is refused before a byte is read, and a body without one (chunked) is counted as it
// arrives and abandoned as soon as it passes the limit. Bun reads a body only when asked, so a
// refused body is never buffered. Limits are in docs/operations.md.

const KiB = 1024;
const MiB = 1024 * KiB;

/** Limits of the JSON and text routes, each above what its own validation can accept. */
export const BODY_LIMITS = {
  /** Signup, verify, top-up links: an e-mail address, a code, an amount. */
  account: 64 * KiB,
  /** Speech requests: up to 40,000 characters of text (`/el`), each of which JSON may spell as a 6-byte escape. */
  speech: 1 * MiB,
  /** Pronunciation dictionaries: up to 5,000 rules, as JSON or a PLS file. */
  dictionary: 4 * MiB,
  /** Realtime profiles and Speech Engines: their own bounds allow about 960 KB of UTF-8. */
  profile: 1 * MiB,
  /** Realtime client secrets: a profile id and a number, or OpenAI's session settings (its instructions and tools may be long). */
  clientSecret: 1 * MiB,
  /** Phone links (a carrier and its credential) and the carriers' form-encoded call webhooks: a few hundred bytes. */
  telephony: 64 * KiB,
  /** Stripe's signed webhook events, verified on the raw body. */
  webhook: 1 * MiB,
} as const;

export function payloadTooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `the request body is larger than ${limit} bytes`, { limit_bytes: limit });
}

/** The declared length when it is over `limit`; a missing or unreadable header says nothing. */
export function declaredOver(request: Request, limit: number): boolean {
  const declared = Number(request.headers.get("content-length"));
  return Number.isFinite(declared) && declared > limit;
}

/** The whole body, at most `limit` bytes; 413 `payload_too_large` past it. */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  if (declaredOver(request, limit)) throw payloadTooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read().catch(() => {
      throw new ApiError("invalid_request", "the request body could not be read to its end");
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  // A plain array of its own (not a Buffer, whose small ones share a pool): it may cross to a worker.
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

export async function textBody(request: Request, limit: number): Promise<string> {
  return new TextDecoder().decode(await readBody(request, limit));
}

/** The body as JSON; anything else is 400 `invalid_request`. */
export async function jsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await textBody(request, limit);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("invalid_request", "the body is not valid JSON");
  }
}

export type FormBody = Awaited<ReturnType<Request["formData"]>>;

/** A `multipart/form-data` body; one that cannot be parsed is 400 `invalid_request`. */
export async function formBody(request: Request, limit: number): Promise<FormBody> {
  const bytes = await readBody(request, limit);
  try {
    return await new Response(bytes, { headers: { "content-type": request.headers.get("content-type") ?? "" } }).formData();
  } catch {
    throw new ApiError("invalid_request", "the multipart body cannot be read");
  }
}

/** The largest body any route reads: declared lengths past it are refused before routing. */
export function largestBodyLimit(config: Pick<Config, "maxAudioUploadBytes">): number {
  return Math.max(config.maxAudioUploadBytes, ...Object.values(BODY_LIMITS));
}
