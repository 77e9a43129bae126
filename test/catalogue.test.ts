import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { parseDecimal, rational, toSignificant } from "../src/catalogue/price.ts";
import { creditsPerBaseUnit, pricingView } from "../src/catalogue/pricing.ts";
import { servedCatalogue } from "../src/providers/served-catalogue.ts";
import type { ProviderSpec } from "../src/catalogue/types.ts";
import { modelsView, providersView } from "../src/catalogue/views.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/log.ts";
import { ProviderHealth } from "../src/routing/health.ts";
import { EVERY_PROVIDER_ON } from "./fakes/server-env.ts";

describe("price arithmetic", () => {
  test("decimal strings parse exactly", () => {
    expect(parseDecimal("0.0000125")).toEqual(rational(1n, 80000n));
    expect(parseDecimal("15")).toEqual(rational(15n));
    expect(() => parseDecimal("-1")).toThrow();
    expect(() => parseDecimal("1e-5")).toThrow();
    expect(() => parseDecimal(".5")).toThrow();
  });

  test("rounding keeps at most six significant digits, half-up", () => {
    expect(toSignificant(rational(2n, 3n))).toBe("0.666667");
    expect(toSignificant(rational(1n, 3n))).toBe("0.333333");
    expect(toSignificant(parseDecimal("1.2345645"))).toBe("1.23456");
    expect(toSignificant(parseDecimal("1.2345650"))).toBe("1.23457"); // exact half goes up
    expect(toSignificant(parseDecimal("0.000123456789"))).toBe("0.000123457");
    expect(toSignificant(parseDecimal("9.999995"))).toBe("10"); // carry across the decimal point
    expect(toSignificant(parseDecimal("123456789"))).toBe("123457000");
    expect(toSignificant(parseDecimal("0.0125"))).toBe("0.0125"); // no trailing zeros
    expect(toSignificant(parseDecimal("0"))).toBe("0");
  });
});

describe("catalogue pricing view", () => {
  test("0.0000125 per character is shown as 0.0125 per 1000 characters", () => {
    expect(pricingView("tts", { amount: "0.0000125", per: "character" })).toEqual({ currency: "usd", unit: "1000 characters", unitPrice: "0.0125" });
  });

  test("a per-character price with more digits rounds half-up to 6 significant digits", () => {
    // 0.00000123456789 per char → 0.00123456789 per 1000 → 0.00123457
    expect(pricingView("tts", { amount: "0.00000123456789", per: "character" }).unitPrice).toBe("0.00123457");
  });

  test("per-million and per-1000 prices convert to per 1000 characters", () => {
    expect(pricingView("tts", { amount: "15", per: "1000000 characters" }).unitPrice).toBe("0.015");
    expect(pricingView("tts", { amount: "0.10", per: "1000 characters" }).unitPrice).toBe("0.1");
  });

  test("STT prices are shown per minute: $0.40/hour → 0.00666667", () => {
    expect(pricingView("stt", { amount: "0.40", per: "hour" })).toEqual({ currency: "usd", unit: "minute", unitPrice: "0.00666667" });
    expect(pricingView("stt", { amount: "0.0077", per: "minute" }).unitPrice).toBe("0.0077");
  });

  test("requestPrice appears only when the binding carries one", () => {
    expect(pricingView("stt", { amount: "0.006", per: "minute", requestPrice: "0.002" }).requestPrice).toBe("0.002");
    expect("requestPrice" in pricingView("stt", { amount: "0.006", per: "minute" })).toBe(false);
  });

  test("billing rates stay exact: $0.40/hour is 1/9000 USD per second = 1000/9 credits", () => {
    expect(creditsPerBaseUnit({ amount: "0.40", per: "hour" })).toEqual(rational(1000n, 9n));
    expect(creditsPerBaseUnit({ amount: "0.0000125", per: "character" })).toEqual(rational(25n, 2n));
  });
});

const bare = (over: Partial<ProviderSpec>): ProviderSpec => ({
  id: "p",
  name: "P",
  kind: "cloud",
  requiresVoice: false,
  defaults: {},
  bindings: [],
  ...over,
});

describe("catalogue data", () => {
  test("a binding that names an unknown model or the wrong capability is refused at start", () => {
    const binding = { capability: "tts" as const, id: "m", canonical: "a/m", streaming: true, synchronous: true };
    expect(() => new Catalogue({ providers: [bare({ bindings: [binding] })], models: [] })).toThrow(/unknown model/);
    expect(() => new Catalogue({ providers: [bare({ bindings: [binding] })], models: [{ canonical: "a/m", name: "M", capability: "stt", aliases: [] }] })).toThrow(/is tts/);
  });

  test("every shipped provider's entries are valid and priced", () => {
    const all = loadConfig(EVERY_PROVIDER_ON);
    const catalogue = new Catalogue(servedCatalogue(all));
    expect(catalogue.providers.map((p) => p.id)).toEqual(["flite", "svox-pico", "espeak-ng", "elevenlabs", "openai", "deepgram", "cartesia", "assemblyai"]);
    for (const b of catalogue.bindings) {
      expect(b.price).toBeDefined();
      if (b.capability === "tts") expect(b.formats?.length).toBeGreaterThan(0);
    }
  });
});

describe("GET /v1/providers and /v1/models views", () => {
  test("only usable providers are served: local always, eSpeak when enabled, cloud when configured", () => {
    const ids = (env: Record<string, string>) => new Catalogue(servedCatalogue(loadConfig(env))).providers.map((p) => p.id);
    expect(ids({})).toEqual(["flite", "svox-pico"]);
    expect(ids({ ESPEAK_ENABLED: "true" })).toEqual(["flite", "svox-pico", "espeak-ng"]);
    expect(ids({ OPENAI_BASE_URL: "http://127.0.0.1:9999/v1" })).toEqual(["flite", "svox-pico", "openai"]);
    expect(ids({ DEEPGRAM_API_KEY: "dg" })).toEqual(["flite", "svox-pico", "deepgram"]);
  });

  const full = new Catalogue(servedCatalogue(loadConfig({ ELEVENLABS_API_KEY: "k", OPENAI_API_KEY: "k", ASSEMBLYAI_API_KEY: "k" })));
  const health = new ProviderHealth({ failureThreshold: 3, cooldownMs: 5000, cooldownMaxMs: 60000 }, createLogger("silent"));
  const { providers } = providersView(full, (b) => health.view(b)) as { providers: Record<string, any> };

  test("defaults: voice only when the provider has one; synchronousModel only when it differs", () => {
    expect(providers.flite.defaults).toEqual({ tts: { model: "flite", voice: "slt" } });
    expect(providers.elevenlabs.defaults.stt).toEqual({ model: "scribe_v2_realtime", synchronousModel: "scribe_v1" });
    expect(providers.openai.defaults.stt).toEqual({ model: "gpt-4o-transcribe" });
    expect(providers.assemblyai.defaults.tts).toBeUndefined();
  });

  test("model entries: id, canonical, aliases, flags, formats, instructions, pricing", () => {
    const mini = providers.openai.tts.find((m: any) => m.id === "gpt-4o-mini-tts");
    expect(mini).toEqual({
      id: "gpt-4o-mini-tts",
      canonical: "openai/gpt-4o-mini-tts",
      aliases: ["gpt-4o-mini-tts-2025-12-15"],
      streaming: true,
      synchronous: true,
      formats: ["mp3", "opus", "aac", "flac", "wav", "pcm"],
      instructions: { mode: "native", honored: true },
      pricing: { currency: "usd", unit: "1000 characters", unitPrice: "0.015" },
      health: { status: "up", consecutive_failures: 0, retry_at: null, cooldown_ms: null, last_failure: null },
    });
    const tts1 = providers.openai.tts.find((m: any) => m.id === "tts-1");
    expect(tts1.instructions).toBeUndefined();
    expect(tts1.batch).toBeUndefined(); // batch is an STT field
    const universal = providers.assemblyai.stt.find((m: any) => m.id === "universal");
    expect(universal).toMatchObject({ streaming: false, synchronous: true, batch: true, pricing: { unit: "minute", unitPrice: "0.0025" } });
    expect(universal.formats).toBeUndefined();
  });

  test("pricing is absent for an unpriced binding", () => {
    const unpriced = new Catalogue({
      providers: [bare({ id: "free", bindings: [{ capability: "tts", id: "m", canonical: "a/m", streaming: true, synchronous: false, formats: ["pcm"] }] })],
      models: [{ canonical: "a/m", name: "M", capability: "tts", aliases: [] }],
    });
    const entry = (providersView(unpriced, () => undefined).providers.free as any).tts[0];
    expect("pricing" in entry).toBe(false);
  });

  test("models view groups bindings by canonical model, with each provider's flags", () => {
    const view = modelsView(full);
    const whisper = view.stt.find((m) => m.canonical === "openai/whisper-1")!;
    expect(whisper.aliases).toEqual(["whisper"]);
    expect(whisper.providers).toEqual([
      {
        id: "openai",
        name: "OpenAI",
        provider_model_id: "whisper-1",
        requires_voice: true,
        streaming: false,
        synchronous: true,
        batch: false,
        pricing: { currency: "usd", unit: "minute", unitPrice: "0.006" },
      },
    ]);
    expect(view.tts.some((m) => m.canonical === "cmu/flite")).toBe(true);
    // Models of providers that are not served do not appear.
    expect(view.tts.some((m) => m.canonical.startsWith("deepgram/"))).toBe(false);
  });
});
