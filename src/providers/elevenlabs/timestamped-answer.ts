import { mp3Clock, sampleClock } from "../../audio/audio-clock.ts";
import { charTimes } from "../timing/char-times.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, CharacterTimes, TtsEvent } from "../types.ts";
import type { UtteranceAnswer } from "../utterance-stream.ts";
import type { WireJson } from "../wire-json.ts";
import { answerTimes } from "./wire-alignment.ts";

/** The JSON lines of a body, as its chunks bring them. */
async function* jsonLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<WireJson> {
  const decoder = new TextDecoder();
  let rest = "";
  const parse = (line: string): WireJson => {
    try {
      return JSON.parse(line);
    } catch {
      throw new ProviderError("elevenlabs sent a line that is not JSON", true);
    }
  };
  for await (const chunk of chunks) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const line of lines) if (line.trim()) yield parse(line);
  }
  if (rest.trim()) yield parse(rest);
}

/** White space the utterance stands for beside its text, timed at one instant. */
const at = (text: string, seconds: number): CharacterTimes => charTimes(text, [{ at: 0, seconds }]);

/**
 * Answers of `POST /v1/text-to-speech/{voice}/stream/with-timestamps`, one per utterance: JSON
 * lines `{audio_base64, alignment, normalized_alignment}`, times in seconds from the start of that
 * answer's audio. Each line's timings go out before its audio, moved onto the stream's timeline
 * (after the audio of the utterances before); the white space around the utterance's text (which
 * ElevenLabs was not sent) is timed where the utterance's audio starts and ends.
 */
export function timestampedAnswers(format: AudioFormat): UtteranceAnswer {
  const clock = format.encoding === "mp3" ? mp3Clock() : sampleClock(format.sampleRate, 2);
  let played = 0;
  return {
    contentType: /^application\/(x-nd)?json/,
    async *events(chunks, { text, raw }): AsyncGenerator<TtsEvent> {
      const from = played;
      const start = raw.indexOf(text);
      if (start > 0) yield { type: "alignment", alignment: at(raw.slice(0, start), from) };
      for await (const line of jsonLines(chunks)) {
        const alignment = answerTimes(line.alignment, from);
        const normalized = answerTimes(line.normalized_alignment, from);
        if (alignment) yield { type: "alignment", alignment, ...(normalized ? { normalized } : {}) };
        if (typeof line.audio_base64 !== "string" || !line.audio_base64) continue;
        const audio = Buffer.from(line.audio_base64, "base64");
        played = clock.advance(audio);
        yield { type: "audio", audio };
      }
      const trailing = raw.slice(start + text.length);
      if (trailing) yield { type: "alignment", alignment: at(trailing, played) };
    },
  };
}
