import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import type { BindingSpec } from "../../src/catalogue/types.ts";
import type { TtsProvider, TtsStream, Voice } from "../../src/providers/types.ts";
import { oneBindingCatalogue } from "./one-binding-catalogue.ts";

// A provider with as many voices as a large cloud account has (bench:voices, test/voice-search.test.ts):
// names, descriptions, languages, genders, accents, ages, use cases, styles and categories drawn
// from fixed word lists with a seeded generator, so every run lists the same catalogue. It speaks
// nothing.

const SYLLABLES = ["al", "ar", "be", "ca", "da", "el", "fi", "ga", "ha", "is", "jo", "ka", "li", "ma", "no", "or", "pa", "qui", "ra", "sa", "ta", "ul", "va", "wi", "xe", "yo", "za"];
export const STYLES = ["warm", "calm", "bright", "deep", "crisp", "gentle", "raspy", "smooth", "energetic", "soft", "confident", "playful"];
export const USES = ["narration", "news", "conversational", "characters", "advertisement", "meditation", "audiobook", "education", "gaming", "support"];
const NOUNS = ["narrator", "storyteller", "presenter", "guide", "host", "announcer", "teacher", "companion", "reader", "voice"];
const LANGUAGES = [
  "en-US",
  "en-GB",
  "en-AU",
  "en-IN",
  "de-DE",
  "fr-FR",
  "fr-CA",
  "es-ES",
  "es-MX",
  "it-IT",
  "pt-BR",
  "pt-PT",
  "nl-NL",
  "pl-PL",
  "sv-SE",
  "ja-JP",
  "ko-KR",
  "zh-CN",
  "hi-IN",
  "ar-SA",
  "tr-TR",
  "ru-RU",
];
const AGES = ["young", "middle_aged", "old"];
const GENDERS = ["female", "male", "neutral"];

/** A small seeded generator (mulberry32): the same catalogue every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function manyVoices(count: number, seed = 7): Voice[] {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const word = () => {
    const w = Array.from({ length: 2 + Math.floor(r() * 2) }, () => pick(SYLLABLES)).join("");
    return w.charAt(0).toUpperCase() + w.slice(1);
  };
  return Array.from({ length: count }, (_, i) => {
    const style = pick(STYLES);
    const use = pick(USES);
    const languages = [pick(LANGUAGES), ...(r() < 0.2 ? [pick(LANGUAGES)] : [])];
    return {
      id: `bench-${i.toString(36).padStart(4, "0")}`,
      name: `${word()} ${word()}`,
      languages,
      gender: pick(GENDERS),
      description: `A ${style}, ${pick(STYLES)} ${pick(NOUNS)} for ${use}.`,
      category: r() < 0.7 ? "official" : "community",
      labels: { age: pick(AGES), use_case: use, style },
      previewUrl: `https://previews.example.com/${i}.mp3`,
    };
  });
}

/** The provider `many`, serving model `bench/many` with `count` voices. */
export class ManyVoicesProvider implements TtsProvider {
  readonly id = "many";
  private readonly list: Voice[];

  constructor(count: number) {
    this.list = manyVoices(count);
  }

  open(): Promise<TtsStream> {
    return Promise.reject(new Error("the bench's voices speak nothing"));
  }

  async voices(): Promise<Voice[]> {
    return this.list;
  }
}

export function manyVoicesCatalogue(): CatalogueData {
  const binding: BindingSpec = { capability: "tts", id: "many", canonical: "bench/many", streaming: true, synchronous: true, formats: ["pcm"], price: { amount: "0.00001", per: "character" } };
  return oneBindingCatalogue("many", "Many voices", true, binding, "Many");
}
