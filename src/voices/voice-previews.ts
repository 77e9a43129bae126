import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding } from "../catalogue/types.ts";
import type { Logger } from "../log.ts";
import type { TtsProvider } from "../providers/types.ts";
import type { VoiceEntry } from "./voice-entry.ts";

// Samples of the embedded engines' voices, which have no provider to host one: a short text in the
// voice's language, synthesized through the same `open()` a TTS session uses, as MP3, once per
// voice and kept in memory (a server has a few hundred such voices at most). Cloud voices keep the
// provider's own preview URL, or have none: the router never spends an operator's cloud credits on
// a request nobody pays for.

/** Where the router serves a preview; `previewPath` adds the query. */
export const PREVIEW_PATH = "/v1/voices/preview";

export const previewPath = (model: string, voice: string) => `${PREVIEW_PATH}?${new URLSearchParams({ model, voice })}`;

/** What a voice says in its preview, by language; other languages read the English one. */
const SAMPLES: Record<string, string> = {
  en: "Hello! This is how I sound. I can read aloud anything you write.",
  de: "Hallo! So klinge ich. Ich lese alles vor, was Sie schreiben.",
  es: "¡Hola! Así sueno. Puedo leer en voz alta todo lo que escribas.",
  fr: "Bonjour ! Voici ma voix. Je peux lire à voix haute tout ce que vous écrivez.",
  it: "Ciao! Questa è la mia voce. Posso leggere ad alta voce tutto quello che scrivi.",
  pt: "Olá! Esta é a minha voz. Posso ler em voz alta tudo o que escrever.",
  nl: "Hallo! Zo klink ik. Ik lees alles voor wat je schrijft.",
};

/** Previews kept at most (the oldest made is dropped first). */
const MAX_KEPT = 512;

export class VoicePreviews {
  private readonly made = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly catalogue: Catalogue,
    private readonly providers: ReadonlyMap<string, TtsProvider>,
    private readonly log: Logger,
    /** Longest a synthesis may take before it is given up. */
    private readonly timeoutMs: number,
  ) {}

  /** Whether the router makes the previews of this binding's voices: an embedded engine that produces MP3. */
  serves(binding: Binding): boolean {
    return binding.provider.kind === "local" && binding.capability === "tts" && (binding.formats?.includes("mp3") ?? false) && this.providers.has(binding.provider.id);
  }

  /** The entry's preview as MP3, made on first request by its first provider the router makes previews for; undefined when there is none. */
  audio(entry: VoiceEntry): Promise<Uint8Array> | undefined {
    const binding = entry.providers.map((p) => this.catalogue.lookup(`${p.id}/${p.provider_model_id}`, "tts")[0]).find((b): b is Binding => b !== undefined && this.serves(b));
    if (!binding) return undefined;
    const key = `${entry.model.id}\u0000${entry.voice.id}`;
    let audio = this.made.get(key);
    if (!audio) {
      audio = this.synthesize(binding, entry.voice.id, SAMPLES[entry.voice.languages[0]?.id ?? "en"] ?? SAMPLES.en);
      audio.catch((err) => {
        this.made.delete(key);
        this.log.warn({ err, model: entry.model.id, voice: entry.voice.id }, "a voice preview could not be made");
      });
      this.made.set(key, audio);
      if (this.made.size > MAX_KEPT) this.made.delete(this.made.keys().next().value!);
    }
    return audio;
  }

  private async synthesize(binding: Binding, voice: string, text: string): Promise<Uint8Array> {
    const provider = this.providers.get(binding.provider.id)!;
    const stream = await provider.open({ model: binding.id, voice, format: "mp3", options: {} });
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      stream.cancel();
    }, this.timeoutMs);
    try {
      stream.write(text);
      stream.end();
      const parts: Uint8Array[] = [];
      for await (const ev of stream) if (ev.type === "audio") parts.push(ev.audio);
      if (late) throw new Error(`${binding.provider.id} took longer than ${this.timeoutMs} ms to speak a preview of ${voice}`);
      const audio = Buffer.concat(parts);
      if (audio.byteLength === 0) throw new Error(`${binding.provider.id} made no audio for voice ${voice}`);
      return new Uint8Array(audio);
    } finally {
      clearTimeout(timer);
    }
  }
}
