import { ApiError } from "../../errors.ts";
import { openAiErrorObject } from "./errors.ts";

// Server-sent events as the /oai streams send them (speech with `stream_format: "sse"`,
// transcriptions with `stream: true`): a named event whose data is the JSON object.

const encoder = new TextEncoder();

export const sseEvent = <T extends { type: string }>(data: T) => encoder.encode(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);

/** OpenAI's error event, which the SDK's SSE reader raises as `APIError`: what ends a stream that failed after it began. */
export function sseError(err: unknown): Uint8Array {
  const apiError = err instanceof ApiError ? err : new ApiError("upstream_error", "the stream failed");
  return sseEvent({ type: "error", error: openAiErrorObject(apiError).error });
}

export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
