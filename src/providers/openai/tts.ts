import { ProviderError } from "../../errors.ts";
import type { AudioFormat, TtsProvider, TtsStream, TtsStreamRequest, Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";
import { OPENAI_TTS_RATE } from "./catalogue.ts";

const VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"];

/**
 * OpenAI `POST /audio/speech`, one request per utterance (UtteranceTtsStream). Provider options:
 * `instructions` (native: gpt-4o-mini-tts honours it), `speed`.
 */
export class OpenAiTts implements TtsProvider {
  constructor(
    private readonly options: HttpProviderOptions,
    /** `openai`, or another id for an OpenAI-compatible server. */
    readonly id = "openai",
  ) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`${this.id} streaming sessions produce pcm or mp3, not ${req.format}`, false);
    const { options } = this;
    const format: AudioFormat = { encoding: req.format === "mp3" ? "mp3" : "pcm_s16le", sampleRate: OPENAI_TTS_RATE, channels: 1 };
    return new UtteranceTtsStream(format, this.id, options.idleTimeoutMs, (input, abort) => {
      const body: Record<string, unknown> = { model: req.model, input, voice: req.voice, response_format: req.format };
      if (req.options.instructions) body.instructions = req.options.instructions;
      if (req.speed !== undefined) body.speed = req.speed;
      else if (req.options.speed) body.speed = req.options.speed; // no number: OpenAI's to take or refuse
      return upstreamFetch(
        this.id,
        `${options.baseUrl}/audio/speech`,
        { method: "POST", headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) }, body: JSON.stringify(body) },
        options.connectTimeoutMs,
        abort,
      );
    });
  }

  async voices(): Promise<Voice[]> {
    return VOICES.map((id) => ({ id, name: id, languages: [] }));
  }
}
