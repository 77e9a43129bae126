import espeakData from "@echogarden/espeak-ng-emscripten/espeak-ng.data" with { type: "file" };
import { UnknownVoiceError, type EngineVoice, type LocalEngine } from "../local-engine-types.ts";
import type { Anchor } from "../timing/char-times.ts";

/** eSpeak's natural pace, words per minute; `speed` scales it. */
const ESPEAK_NORMAL_WPM = 175;
/** The paces eSpeak NG speaks at (words per minute), as `speed`: beyond them it stays at the bound. */
export const ESPEAK_SPEEDS = { min: 80 / ESPEAK_NORMAL_WPM, max: 450 / ESPEAK_NORMAL_WPM };

/** What eSpeak's synthesis callback reports beside the audio: `word` (1-based position in characters) and clause `end` events, at `audio_position` ms. */
interface EspeakEvent {
  type: string;
  text_position: number;
  audio_position: number;
}

/**
 * eSpeak NG compiled with Emscripten; its synthesis callback hands out PCM chunk by chunk, with the
 * events that say where each word starts in the audio and where the last clause ends.
 */
export async function createEspeakEngine(): Promise<LocalEngine> {
  const { default: init } = await import("@echogarden/espeak-ng-emscripten");
  // Its data is handed over, read: the package's loader looks for the file beside its script, which in `bun run build`'s executable is elsewhere.
  const data = await Bun.file(espeakData).arrayBuffer();
  const m = await init({ getPreloadedPackage: () => data });
  const worker = new m.eSpeakNGWorker();
  const rate: number = worker.get_samplerate();
  // Its voice files set no gender: each language speaks with eSpeak's default variant, a male voice.
  const voices: EngineVoice[] = worker.list_voices().map((v: { name: string; identifier: string; languages: { name: string }[] }) => ({
    id: v.identifier,
    name: v.name,
    languages: v.languages.map((l) => l.name),
    gender: "male",
    sourceUrls: ["https://github.com/espeak-ng/espeak-ng"],
  }));
  // Voices are named by identifier (`gmw/en-US`) or by language (`en-us`), as eSpeak itself accepts.
  const names = new Set(voices.flatMap((v) => [v.id, ...v.languages]));
  let current: string | undefined;

  const select = (id: string | undefined) => {
    const wanted = id ?? "en";
    if (!names.has(wanted)) throw new UnknownVoiceError("espeak-ng", wanted);
    if (wanted !== current) {
      worker.set_voice(wanted);
      current = wanted;
    }
  };

  return {
    voices: () => voices,
    voiceNames: () => [...names],
    async prepare(id) {
      select(id);
      return rate;
    },
    synthesize(text, id, onAudio, speed) {
      select(id);
      worker.set_rate(Math.round(ESPEAK_NORMAL_WPM * (speed ?? 1)));
      const anchors: Anchor[] = [];
      let spokenUntil = 0;
      worker.synthesize(text, (samples: Int16Array, events: EspeakEvent[]) => {
        if (samples.length) onAudio(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
        for (const ev of events) {
          if (ev.type === "word") anchors.push({ at: ev.text_position - 1, seconds: ev.audio_position / 1000 });
          else if (ev.type === "end") spokenUntil = Math.max(spokenUntil, ev.audio_position / 1000);
        }
        return false; // false = keep going
      });
      return [...anchors, { at: [...text].length, seconds: spokenUntil }];
    },
  };
}
