import type { TranscriptSegment } from "../../providers/stt-types.ts";
import type { FileTranscription } from "../../sessions/file-transcription.ts";
import { SSE_HEADERS, sseError, sseEvent } from "./sse.ts";

// `stream: true` on `/oai/audio/transcriptions`: OpenAI's `transcript.text.delta` events, one per
// final segment as the provider recognizes it, then `transcript.text.done`. See docs/compat-oai.md.

type Run = (onSegment: (segment: TranscriptSegment) => void) => Promise<FileTranscription>;

/**
 * Answers once the first segment is recognized or the transcription ended, so that a failure
 * before any text (400, 402, 502, …) is the plain error status; a failure after it is OpenAI's
 * error event. A provider that does not stream a file gives its whole text as one delta at the end.
 * The joined deltas are the transcript's text (segments joined by a space, as the transcript joins them).
 * `done` carries no `usage`: OpenAI's is token usage, which a per-second bill does not have.
 * A client that left (`signal`) stopped the work; what it would have been answered goes nowhere.
 */
export async function streamTranscription(run: Run, signal: AbortSignal): Promise<Response> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const push = (bytes: Uint8Array) => {
    try {
      controller.enqueue(bytes);
    } catch {
      // the client cancelled the body: its request's signal has stopped the work
    }
  };
  let sent = "";
  let segments = 0;
  const delta = (text: string) => {
    sent += text;
    push(sseEvent({ type: "transcript.text.delta", delta: text }));
  };
  let began = () => {};
  const first = new Promise<undefined>((resolve) => (began = () => resolve(undefined)));
  const outcome = run((segment) => {
    delta(segments++ ? ` ${segment.text}` : segment.text);
    began();
  }).then(
    (t) => ({ t }),
    (error: unknown) => ({ error }),
  );
  const early = await Promise.race([first, outcome]);
  if (early && "error" in early) {
    if (signal.aborted) return new Response(null);
    throw early.error;
  }
  void outcome.then((o) => {
    if ("error" in o) push(sseError(o.error));
    else {
      const rest = o.t.text.startsWith(sent) ? o.t.text.slice(sent.length) : "";
      if (rest) delta(rest);
      push(sseEvent({ type: "transcript.text.done", text: o.t.text }));
    }
    try {
      controller.close();
    } catch {
      // already cancelled by the client
    }
  });
  return new Response(body, { headers: SSE_HEADERS });
}
