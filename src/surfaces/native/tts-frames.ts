import type { TtsCommand } from "../../sessions/tts-events.ts";

export const MAX_TEXT_FRAME_CHARACTERS = 2000;

/** Whether a frame's text is over the limit (counted in characters, stopping at the limit). */
export function overFrameLimit(text: string): boolean {
  let count = 0;
  for (const _ of text) if (++count > MAX_TEXT_FRAME_CHARACTERS) return true;
  return false;
}

export const FRAME_TOO_LARGE = `a text frame holds at most ${MAX_TEXT_FRAME_CHARACTERS} characters`;

export type FrameVerdict = { command: TtsCommand } | { error: "invalid_tts_frame" | "tts_text_frame_too_large"; message: string };

/** A `/v1/tts` client frame: a text frame's parsed JSON (undefined when it is not JSON), or a binary frame. */
export function parseTtsFrame(message: unknown): FrameVerdict {
  if (typeof message !== "object" || message === null || Array.isArray(message) || ArrayBuffer.isView(message)) {
    return { error: "invalid_tts_frame", message: "frames are JSON text objects with a type" };
  }
  const frame = message as Record<string, unknown>;
  switch (frame.type) {
    case "text": {
      if (typeof frame.text !== "string") return { error: "invalid_tts_frame", message: "a text frame needs a string text" };
      if (overFrameLimit(frame.text)) return { error: "tts_text_frame_too_large", message: FRAME_TOO_LARGE };
      return { command: { type: "text", text: frame.text } };
    }
    case "flush":
    case "close":
      return { command: { type: frame.type } };
    default:
      return { error: "invalid_tts_frame", message: `unknown frame type ${JSON.stringify(frame.type)}` };
  }
}
