import { ElysiaCustomStatusResponse, StatusMap } from "elysia";

// SDKs (OpenAI's, ElevenLabs') retry 408, 409, 429 and 5xx answers unless told not to. A 4xx is the
// request's own fault and a 501 a path this service lacks: sending it again cannot help. Every such
// answer, on every surface and whichever way a route produced it, carries `x-should-retry: false`;
// app.ts applies this once for all responses. A 429 that says when to come back (`Retry-After`: a
// tenant's or key's rate or concurrency limit, docs/limits.md) is the exception: retrying then passes.

const mustNotRetry = (status: number) => (status >= 400 && status < 500) || status === 501;

/** The status an Elysia handler's value will be sent with. */
export function statusOf(value: unknown, setStatus: number | string | undefined): number {
  if (value instanceof Response) return value.status;
  if (value instanceof ElysiaCustomStatusResponse) return value.code;
  if (typeof setStatus === "string") return StatusMap[setStatus as keyof typeof StatusMap] ?? 200;
  return setStatus ?? 200;
}

/** Adds `x-should-retry: false` to the headers of an answer the client must not retry. */
export function markRetryVerdict(value: unknown, set: { status?: number | string; headers: Record<string, unknown> }): void {
  if (value instanceof Response && value.status === 429 && value.headers.has("retry-after")) return;
  if (mustNotRetry(statusOf(value, set.status))) set.headers["x-should-retry"] = "false";
}
