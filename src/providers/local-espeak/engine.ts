import espeakData from "@echogarden/espeak-ng-emscripten/espeak-ng.data" with { type: "file" };
import { UnknownVoiceError, type EngineVoice, type LocalEngine } from "../local-engine-types.ts";

/** eSpeak's natural pace, words per minute; `speed` scales it. */
const ESPEAK_NORMAL_WPM = 175;
/** The paces eSpeak NG speaks at (words per minute), as `speed`: beyond them it stays at the bound. */
export const ESPEAK_SPEEDS = { min: 80 / ESPEAK_NORMAL_WPM, max: 450 / ESPEAK_NORMAL_WPM };

/** eSpeak NG compiled with Emscripten; its synthesis callback hands out PCM chunk by chunk. */
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
      worker.synthesize(text, (samples: Int16Array) => {
        if (samples.length) onAudio(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
        return false; // false = keep going
      });
    },
  };
}
