import { bearerToken } from "../../accounts/keys.ts";
import { type Locator, locatorsOfBody } from "../../pronunciation/locators.ts";
import { ApiError } from "../../errors.ts";
import type { TtsCommand } from "../../sessions/tts-events.ts";
import { FRAME_TOO_LARGE, overFrameLimit } from "../native/tts-frames.ts";
import { voiceSettingsOptions } from "./provider-options.ts";

// Client frames of `stream-input`, as ElevenLabs defines them: JSON text objects with a string
// `text`. The first is the init frame (`text: " "`, voice settings, generation config, maybe the
// key); then text frames (`flush: true` asks for the audio of everything so far); `{"text": ""}`
// ends the input.

export interface InitFrame {
  /** `xi_api_key` (the docs' spelling), `xi-api-key` (the schema's), or `authorization: Bearer …`. */
  key?: string;
  /** What `voice_settings` and `generation_config.chunk_length_schedule` translate to as provider options. */
  fields: Record<string, string>;
  /** Text the init frame carries beyond the customary single space. */
  commands: TtsCommand[];
  /** `pronunciation_dictionary_locators`. */
  pronunciation: Locator[];
}

type Frame = Record<string, unknown> & { text: string };

/** A client frame as Elysia hands it over: JSON text already parsed, other text as a string, binary as a Buffer. */
function frameOf(message: unknown): Frame {
  if (typeof message !== "object" || message === null || Array.isArray(message) || ArrayBuffer.isView(message)) {
    throw new ApiError("invalid_tts_frame", "frames are JSON text objects with a string text");
  }
  const frame = message as Record<string, unknown>;
  if (typeof frame.text !== "string") throw new ApiError("invalid_tts_frame", "a frame needs a string text");
  if (overFrameLimit(frame.text)) throw new ApiError("tts_text_frame_too_large", FRAME_TOO_LARGE);
  for (const name of ["flush", "try_trigger_generation"]) {
    if (frame[name] !== undefined && frame[name] !== null && typeof frame[name] !== "boolean") throw new ApiError("invalid_tts_frame", `${name} must be true or false`);
  }
  return frame as Frame;
}

/**
 * Text, then a flush when asked; an empty text ends the input unless it comes with `flush: true`
 * (a flush that keeps the socket open). `try_trigger_generation` needs nothing: text goes to the
 * provider as it arrives.
 */
function commandsOf(frame: Frame): TtsCommand[] {
  const flush: TtsCommand[] = frame.flush === true ? [{ type: "flush" }] : [];
  if (frame.text === "") return flush.length ? flush : [{ type: "close" }];
  return [{ type: "text", text: frame.text }, ...flush];
}

function chunkLengthSchedule(config: unknown): Record<string, string> {
  if (config === undefined || config === null) return {};
  if (typeof config !== "object" || Array.isArray(config)) throw new ApiError("invalid_tts_frame", "generation_config must be an object");
  const schedule = (config as Record<string, unknown>).chunk_length_schedule;
  if (schedule === undefined || schedule === null) return {};
  if (!Array.isArray(schedule) || !schedule.length || schedule.some((n) => typeof n !== "number")) {
    throw new ApiError("invalid_tts_frame", "generation_config.chunk_length_schedule must be a list of numbers");
  }
  return { chunk_length_schedule: schedule.join(",") };
}

/** The first frame. Throws `ApiError` `invalid_tts_frame` for a frame that breaks the protocol. */
export function parseInitFrame(message: unknown): InitFrame {
  const frame = frameOf(message);
  const keyField = [frame.xi_api_key, frame["xi-api-key"]].find((k): k is string => typeof k === "string" && k.trim() !== "");
  const key = keyField?.trim() ?? (typeof frame.authorization === "string" ? bearerToken(frame.authorization) : undefined);
  let settings: Record<string, string>;
  let pronunciation: Locator[];
  try {
    settings = voiceSettingsOptions(frame.voice_settings);
    pronunciation = locatorsOfBody(frame.pronunciation_dictionary_locators, "pronunciation_dictionary_locators");
  } catch (err) {
    throw new ApiError("invalid_tts_frame", (err as Error).message);
  }
  // The customary " " is not spoken, but a flush it asks for still counts.
  const commands: TtsCommand[] = frame.text.trim() ? commandsOf(frame) : frame.flush === true ? [{ type: "flush" }] : [];
  return { key, fields: { ...settings, ...chunkLengthSchedule(frame.generation_config) }, commands, pronunciation };
}

/** A frame after the init frame: the session commands it stands for. Throws `ApiError` `invalid_tts_frame`. */
export function parseTextFrame(message: unknown): TtsCommand[] {
  return commandsOf(frameOf(message));
}
