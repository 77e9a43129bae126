import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { AudioPool } from "../src/pools/audio-pool.ts";
import type { EnginePool } from "../src/pools/engine-pool.ts";
import type { FilePool } from "../src/pools/file-pool.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { servedCatalogue } from "../src/providers/served-catalogue.ts";
import { loadConfig } from "../src/config.ts";
import { PROVIDERS, type ProviderFindings } from "../src/providers/all.ts";
import { DEFAULT_PICO_VOICES_URL } from "../src/providers/local-pico/index.ts";
import { providerAdapters } from "../src/providers/registry.ts";
import { AUDIO_FORMATS } from "../src/planning/stt-request.ts";
import { EVERY_PROVIDER_ON } from "./fakes/server-env.ts";

// Each provider is declared once (providers/<id>/index.ts) and the config, catalogue and registry
// iterate the list: these check that the parts a provider declares agree with each other.

const everything = loadConfig({
  ...EVERY_PROVIDER_ON,
  OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1",
  OPENAI_COMPATIBLE_TTS_MODELS: "kokoro",
  OPENAI_COMPATIBLE_STT_MODELS: "whisper-large",
});
const found: ProviderFindings = { pocketsphinx: true };
const catalogue = new Catalogue(servedCatalogue(everything, found));
const runtime = { engines: {} as EnginePool, audio: {} as AudioPool, files: {} as FilePool, upstream: { connectTimeoutMs: 1000, idleTimeoutMs: 1000, keepAliveMs: 4000 } };
const adapters = providerAdapters(everything.providers, found, runtime);

describe("one home per provider", () => {
  test("every provider in the list is served when configured, in the list's order", () => {
    expect(catalogue.providers.map((p) => p.id)).toEqual(PROVIDERS.map((p) => p.id));
  });

  test("every served binding has an adapter of its capability under its provider's id", () => {
    const tts = new Set(adapters.tts.map((a) => a.id));
    const stt = new Map(adapters.stt.map((a) => [a.id, a]));
    for (const b of catalogue.bindings) {
      if (b.capability === "tts") expect(tts.has(b.provider.id)).toBe(true);
      else expect(stt.get(b.provider.id)?.[b.streaming ? "open" : "transcribe"]).toBeDefined();
    }
  });

  test("a streaming STT binding takes exactly its family's input formats (unlisted: every format)", () => {
    const stt = new Map(adapters.stt.map((a) => [a.id, a]));
    let checked = 0;
    for (const b of catalogue.bindings.filter((b) => b.capability === "stt" && b.streaming)) {
      const family = stt.get(b.provider.id)!.family(b.id);
      expect(family).toBeDefined();
      expect({ binding: `${b.provider.id}/${b.id}`, formats: b.inputFormats ?? AUDIO_FORMATS }).toEqual({ binding: `${b.provider.id}/${b.id}`, formats: family!.inputFormats });
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  test("each provider's settings are read under its own names", () => {
    const c = loadConfig({
      ASSEMBLYAI_BASE_URL: "http://127.0.0.1:1/",
      ASSEMBLYAI_STREAMING_URL: "ws://127.0.0.1:2/v3/ws",
      PICO_VOICES_DIR: "/pico",
      OPENAI_COMPATIBLE_BASE_URL: "http://h:1/v1/",
      OPENAI_COMPATIBLE_TTS_PRICE: "0.5",
    });
    expect(c.providers.assemblyai).toEqual({ apiKey: undefined, baseUrl: "http://127.0.0.1:1", streamingUrl: "ws://127.0.0.1:2/v3/ws" });
    expect(c.providers["svox-pico"]).toEqual({ voicesDir: "/pico", voicesUrl: DEFAULT_PICO_VOICES_URL });
    expect(loadConfig({ PICO_VOICES_URL: "" }).providers["svox-pico"].voicesUrl).toBe("");
    expect(c.providers["openai-compatible"]).toEqual({ baseUrl: "http://h:1/v1", ttsModels: [], sttModels: [], ttsPrice: "0.5" });
    expect(() => loadConfig({ OPENAI_COMPATIBLE_BASE_URL: "http://h:1", OPENAI_COMPATIBLE_STT_PRICE: "cheap" })).toThrow(/OPENAI_COMPATIBLE_STT_PRICE/);
    expect(Object.keys(c.providers)).toEqual(PROVIDERS.map((p) => p.id));
  });

  test("nothing below the sessions reads config.ts: values are passed down", () => {
    const below = ["providers", "catalogue", "routing", "ledger", "audio", "db", "util", "sessions", "voices", "pools"];
    const offenders: string[] = [];
    for (const dir of below) {
      for (const file of new Bun.Glob(`src/${dir}/**/*.ts`).scanSync()) {
        if (/from "[./]*\/config\.ts"/.test(readFileSync(file, "utf8"))) offenders.push(file);
      }
    }
    for (const file of new Bun.Glob("workers/*.ts").scanSync()) {
      if (/from "[./]*\/src\/config\.ts"/.test(readFileSync(file, "utf8"))) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
