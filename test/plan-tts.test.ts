import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { BindingSpec, ProviderSpec } from "../src/catalogue/types.ts";
import { planWithNames } from "../src/planning/members.ts";
import { planTts } from "../src/planning/plan-tts.ts";
import type { TtsRequest } from "../src/planning/tts-request.ts";
import { NO_PREFERENCES } from "../src/routing/preferences.ts";
import { refusalOf } from "./helpers/planning.ts";

// The TTS planner on the typed request: one model served by providers that differ in the MP3
// they stream and the speeds they honour.

const binding = (id: string, formats: BindingSpec["formats"] = ["pcm", "mp3"]): BindingSpec => ({ capability: "tts", id, canonical: "shared/speech", streaming: true, synchronous: true, formats });
const provider = (id: string, over: Partial<ProviderSpec> = {}, formats?: BindingSpec["formats"]): ProviderSpec => ({
  id,
  name: id,
  kind: "cloud",
  requiresVoice: false,
  defaults: {},
  bindings: [binding(`${id}-speech`, formats)],
  ...over,
});

const catalogue = new Catalogue({
  providers: [
    provider("mp3-24k", { ttsMp3: { sampleRate: 24000 }, ttsSpeed: true }),
    provider("mp3-44k", { ttsMp3: { sampleRate: 44100, kbps: 128 }, ttsSpeed: { min: 0.5, max: 2 } }),
    provider("pcm-only", {}, ["pcm"]),
  ],
  models: [{ canonical: "shared/speech", name: "Speech", capability: "tts", aliases: [] }],
});

const request = (over: Partial<TtsRequest> = {}): TtsRequest => ({ model: "shared/speech", voice: "v", format: "pcm", options: {}, preferences: NO_PREFERENCES, ...over });
const only = (...ids: string[]) => ({ ...NO_PREFERENCES, only: ids });
const providers = (req: TtsRequest) => planTts(catalogue, req).candidates.map((b) => b.provider.id);

describe("planTts", () => {
  test("the model is required once, by routing", () => {
    expect(refusalOf(() => planTts(catalogue, request({ model: undefined }))).code).toBe("model_required");
    expect(refusalOf(() => planTts(catalogue, request({ model: "nothing/here" }))).code).toBe("model_not_found");
  });

  test("an exact format routes to the providers that produce it", () => {
    expect(planTts(catalogue, request({ format: "mp3" }))).toMatchObject({ format: "mp3" });
    expect(providers(request({ format: "mp3" }))).toEqual(["mp3-24k", "mp3-44k"]);
    expect(refusalOf(() => planTts(catalogue, request({ format: "mp3", preferences: only("pcm-only") }))).code).toBe("invalid_output_format");
  });

  test("an MP3 every candidate streams as asked is theirs; otherwise the session carries PCM for the surface to encode", () => {
    const at24k = { mp3: { sampleRate: 24000 } };
    expect(planTts(catalogue, request({ format: at24k, preferences: only("mp3-24k") }))).toMatchObject({ format: "mp3" });
    const mixed = planTts(catalogue, request({ format: at24k }));
    expect(mixed.format).toBe("pcm");
    expect(mixed.candidates.map((b) => b.provider.id)).toEqual(["mp3-24k", "mp3-44k", "pcm-only"]);
    expect(planTts(catalogue, request({ format: { mp3: { sampleRate: 44100, kbps: 128 } }, preferences: only("mp3-44k") })).format).toBe("mp3");
    expect(planTts(catalogue, request({ format: { mp3: { sampleRate: 44100, kbps: 64 } }, preferences: only("mp3-44k") })).format).toBe("pcm");
  });

  test("an MP3 no allowed provider emits is encoded from PCM, unless the request requires an MP3 provider", () => {
    expect(planTts(catalogue, request({ format: { mp3: { sampleRate: 24000 } }, preferences: only("pcm-only") })).format).toBe("pcm");
    const err = refusalOf(() => planTts(catalogue, request({ format: { mp3: { sampleRate: 24000 }, requireMp3Provider: true }, preferences: only("pcm-only") })));
    expect(err.code).toBe("invalid_output_format");
  });

  test("the model is looked up once however many formats are weighed", () => {
    let lookups = 0;
    const counted = Object.create(catalogue, {
      lookup: {
        value: (...args: Parameters<Catalogue["lookup"]>) => {
          lookups++;
          return catalogue.lookup(...args);
        },
      },
    }) as Catalogue;
    planTts(counted, request({ format: { mp3: { sampleRate: 24000 } } }));
    expect(lookups).toBe(1);
  });

  test("a speed goes only to providers that honour it, as the plan's number; none able is a refusal naming the member speed", () => {
    expect(providers(request({ speed: 1.5 }))).toEqual(["mp3-24k", "mp3-44k"]);
    expect(providers(request({ speed: 3 }))).toEqual(["mp3-24k"]);
    expect(providers(request({ speed: 1 }))).toEqual(["mp3-24k", "mp3-44k", "pcm-only"]);
    expect(planTts(catalogue, request({ speed: 1.5, options: { style: "calm", speed: "0.7" } }))).toMatchObject({ speed: 1.5, options: { style: "calm" } });
    const err = refusalOf(() => planTts(catalogue, request({ speed: 1.5, preferences: only("pcm-only") })));
    expect({ code: err.code, param: err.extra.param }).toEqual({ code: "invalid_request", param: "speed" });
    expect(err.message).toStartWith("speed 1.5 cannot be honoured by pcm-only");
  });

  test("a provider option speed that is a number is the plan's speed, for every candidate as the provider option it was; one that is not stays an option", () => {
    const fromOption = planTts(catalogue, request({ options: { speed: "3", style: "calm" } }));
    expect(fromOption).toMatchObject({ speed: 3, options: { style: "calm" } });
    expect(fromOption.candidates.map((b) => b.provider.id)).toEqual(["mp3-24k", "mp3-44k", "pcm-only"]);
    expect(planTts(catalogue, request({ options: { speed: "0" } }))).toMatchObject({ speed: 0, options: {} });
    for (const speed of ["slow", "", " ", "1.5x"]) {
      const plan = planTts(catalogue, request({ options: { speed } }));
      expect(plan.speed).toBeUndefined();
      expect(plan.options).toEqual({ speed });
    }
    expect(planTts(catalogue, request())).not.toHaveProperty("speed");
  });
});

describe("planWithNames", () => {
  test("a refusal's member and the message naming it take the surface's name; other errors pass as they are", () => {
    const renamed = refusalOf(() =>
      planWithNames(
        () => planTts(catalogue, request({ speed: 9, preferences: only("pcm-only") })),
        (m) => (m === "speed" ? "voice_settings.speed" : m),
      ),
    );
    expect(renamed.extra.param).toBe("voice_settings.speed");
    expect(renamed.message).toStartWith("voice_settings.speed 9 cannot");
    const unnamed = refusalOf(() =>
      planWithNames(
        () => planTts(catalogue, request({ model: undefined })),
        (m) => m ?? "model_id",
      ),
    );
    expect({ code: unnamed.code, param: unnamed.extra.param }).toEqual({ code: "model_required", param: "model_id" });
    expect(() =>
      planWithNames(
        () => JSON.parse("{"),
        () => "x",
      ),
    ).toThrow(SyntaxError);
  });
});
