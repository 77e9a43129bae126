import type { CharacterTimes } from "../../providers/types.ts";
import { toMillisecond } from "../../util/milliseconds.ts";
import type { HttpAudioShape } from "../http-tts-port.ts";

// ElevenLabs' `…/with-timestamps` answers: audio as base64 beside ElevenLabs'
// CharacterAlignmentResponseModel, in seconds from the start of the whole audio.

interface WireAlignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

interface TimestampedChunk {
  audio_base64: string;
  alignment: WireAlignment | null;
  normalized_alignment: WireAlignment | null;
}

function wireOf(times: CharacterTimes[]): WireAlignment | null {
  const characters = times.flatMap((t) => t.chars);
  if (!characters.length) return null;
  return { characters, character_start_times_seconds: times.flatMap((t) => t.starts.map(toMillisecond)), character_end_times_seconds: times.flatMap((t) => t.ends.map(toMillisecond)) };
}

/**
 * The body of `…/stream/with-timestamps`: newline-delimited JSON chunks
 * `{audio_base64, alignment, normalized_alignment}`, as ElevenLabs streams them (and its SDK reads
 * them, line by line). Each piece of the audio (in `audio`'s format) goes with the timings that
 * came since the piece before (`null`: none); timings after the last audio go in a chunk of no audio.
 */
export function timestampedShape(audio: Pick<HttpAudioShape, "pcm" | "encoder" | "preamble">): HttpAudioShape {
  let alignment: CharacterTimes[] = [];
  let normalized: CharacterTimes[] = [];
  const chunk = (bytes: Uint8Array) => {
    const line: TimestampedChunk = { audio_base64: Buffer.from(bytes).toString("base64"), alignment: wireOf(alignment), normalized_alignment: wireOf(normalized) };
    alignment = [];
    normalized = [];
    return new TextEncoder().encode(`${JSON.stringify(line)}\n`);
  };
  return {
    ...audio,
    contentType: () => "application/json",
    alignment(event) {
      alignment.push(event.alignment);
      normalized.push(event.normalized);
    },
    frame: chunk,
    trailer: () => (alignment.length ? chunk(new Uint8Array(0)) : undefined),
  };
}

/** `…/with-timestamps`: the streamed chunks of `body` as one object, their audio and timings joined. */
export async function joinedTimestamps(body: Response): Promise<Response> {
  const chunks = (await body.text())
    .split("\n")
    .filter((line) => line)
    .map((line) => JSON.parse(line) as TimestampedChunk);
  const audio = Buffer.concat(chunks.map((c) => Buffer.from(c.audio_base64, "base64")));
  const times = (pick: (c: TimestampedChunk) => WireAlignment | null): CharacterTimes[] =>
    chunks.map(pick).flatMap((w) => (w ? [{ chars: w.characters, starts: w.character_start_times_seconds, ends: w.character_end_times_seconds }] : []));
  const joined: TimestampedChunk = { audio_base64: audio.toString("base64"), alignment: wireOf(times((c) => c.alignment)), normalized_alignment: wireOf(times((c) => c.normalized_alignment)) };
  return Response.json(joined);
}
