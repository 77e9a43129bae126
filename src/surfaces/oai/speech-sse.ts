import type { HttpAudioShape } from "../http-tts-port.ts";
import { sseError, sseEvent } from "./sse.ts";

// `stream_format: "sse"` on `/oai/audio/speech`: the same audio, each piece as OpenAI's
// `speech.audio.delta` event (base64), then `speech.audio.done` with the usage. See docs/compat-oai.md.

/**
 * The audio shape as server-sent events. `inputTokens` is what the request is billed for (its
 * characters): we have no tokens, and it is the number a caller sums to follow its spend.
 */
export function sseShape(audio: HttpAudioShape, inputTokens: number): HttpAudioShape {
  return {
    ...audio,
    contentType: () => "text/event-stream",
    frame: (bytes) => sseEvent({ type: "speech.audio.delta", audio: Buffer.from(bytes).toString("base64") }),
    trailer: () => sseEvent({ type: "speech.audio.done", usage: { input_tokens: inputTokens, output_tokens: 0, total_tokens: inputTokens } }),
    failure: sseError,
  };
}
