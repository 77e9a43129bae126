import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { BindingSpec, ProviderSpec } from "../src/catalogue/types.ts";
import { ApiError } from "../src/errors.ts";
import { fallbacks as fallbacksSchema } from "../src/openapi/operation.ts";
import { fallbacksOf, fallbacksOfText } from "../src/planning/fallbacks.ts";
import { planStt } from "../src/planning/plan-stt.ts";
import { planTts } from "../src/planning/plan-tts.ts";
import { planVoice } from "../src/planning/plan-voice.ts";
import type { TtsRequest } from "../src/planning/tts-request.ts";
import type { TtsProvider } from "../src/providers/types.ts";
import type { SttFamily, SttProvider } from "../src/providers/stt-types.ts";
import { type Candidate, familyKey, voiceOf } from "../src/routing/candidate.ts";
import { NO_PREFERENCES, type ProviderPreferences } from "../src/routing/preferences.ts";
import { refusalOf as refusal, ttsBinding } from "./helpers/planning.ts";

// Fallback chains across models, on the planners: a primary TTS model served by two providers,
// fallback models of their own (one needing a voice, one only PCM, one that takes any speed), an
// STT model pair that one provider serves in two families.

const tts = ttsBinding;
const stt = (id: string, canonical: string): BindingSpec => ({ capability: "stt", id, canonical, streaming: true, synchronous: true, inputFormats: ["pcm_16000"] });
const provider = (id: string, bindings: BindingSpec[], over: Partial<ProviderSpec> = {}): ProviderSpec => ({ id, name: id, kind: "cloud", requiresVoice: false, defaults: {}, bindings, ...over });

const catalogue = new Catalogue({
  providers: [
    provider("alpha", [tts("main-a", "shared/main"), stt("ears-1", "ears/one"), stt("ears-2", "ears/two")], { ttsSpeed: true }),
    provider("beta", [tts("main-b", "shared/main"), tts("second", "beta/second")]),
    provider("gamma", [tts("voiced", "gamma/voiced")], { requiresVoice: true, ttsSpeed: true }),
    provider("delta", [tts("pcm-only", "delta/pcm-only", { formats: ["pcm"] }), tts("second-d", "beta/second")]),
  ],
  models: [
    { canonical: "shared/main", name: "Main", capability: "tts", aliases: [] },
    { canonical: "beta/second", name: "Second", capability: "tts", aliases: [] },
    { canonical: "gamma/voiced", name: "Voiced", capability: "tts", aliases: [] },
    { canonical: "delta/pcm-only", name: "PCM only", capability: "tts", aliases: [] },
    { canonical: "ears/one", name: "One", capability: "stt", aliases: [] },
    { canonical: "ears/two", name: "Two", capability: "stt", aliases: [] },
  ],
});

const request = (over: Partial<TtsRequest> & { prefs?: Partial<ProviderPreferences> } = {}): TtsRequest => ({
  model: "shared/main",
  voice: "v-main",
  format: "pcm",
  options: {},
  fallbacks: [
    { model: "gamma/voiced", voice: "v-gamma" },
    { model: "beta/second", voice: "v-second" },
  ],
  ...over,
  preferences: { ...NO_PREFERENCES, ...over.prefs },
});
const chain = (over: Parameters<typeof request>[0] = {}) => planTts(catalogue, request(over)).candidates.map((c) => `${c.provider.id}:${c.canonical}:${c.voice ?? "-"}:${c.fallback ?? "primary"}`);

function refusalOf(fn: () => unknown): { code: string; param: unknown; message: string } {
  const err = refusal(fn);
  return { code: err.code, param: err.extra.param, message: err.message };
}
async function asyncRefusalOf(fn: () => Promise<unknown>): Promise<{ code: string; param: unknown; message: string }> {
  const err = await fn().then(
    () => undefined,
    (e) => e,
  );
  if (err instanceof ApiError) return { code: err.code, param: err.extra.param, message: err.message };
  throw err ?? new Error("expected a refusal");
}

describe("a TTS chain", () => {
  test("the primary's providers first, then each fallback's in order, each candidate with its model's voice", () => {
    expect(chain()).toEqual(["alpha:shared/main:v-main:primary", "beta:shared/main:v-main:primary", "gamma:gamma/voiced:v-gamma:0", "beta:beta/second:v-second:1", "delta:beta/second:v-second:1"]);
  });

  test("preferences apply to every model of the chain: order within each model, ignore everywhere", () => {
    expect(chain({ prefs: { order: ["delta", "beta"] } })).toEqual([
      "beta:shared/main:v-main:primary",
      "alpha:shared/main:v-main:primary",
      "gamma:gamma/voiced:v-gamma:0",
      "delta:beta/second:v-second:1",
      "beta:beta/second:v-second:1",
    ]);
    expect(chain({ prefs: { ignore: ["beta"] } })).toEqual(["alpha:shared/main:v-main:primary", "gamma:gamma/voiced:v-gamma:0", "delta:beta/second:v-second:1"]);
  });

  test("a fallback whose every provider the preferences exclude is refused naming it", () => {
    expect(refusalOf(() => chain({ prefs: { only: ["alpha", "beta", "delta"] } }))).toMatchObject({ code: "provider_not_allowed", param: "fallbacks[0].model" });
  });

  test("allow_fallbacks=false: the first candidate only, the fallbacks still checked", () => {
    expect(chain({ prefs: { allowFallbacks: false } })).toEqual(["alpha:shared/main:v-main:primary"]);
    expect(refusalOf(() => chain({ prefs: { allowFallbacks: false }, fallbacks: [{ model: "nope" }] }))).toMatchObject({ code: "model_not_found", param: "fallbacks[0].model" });
  });

  test("the provider pin is the primary's: the fallbacks keep their providers", () => {
    expect(chain({ provider: "beta" })).toEqual(["beta:shared/main:v-main:primary", "gamma:gamma/voiced:v-gamma:0", "beta:beta/second:v-second:1", "delta:beta/second:v-second:1"]);
  });

  test("at most 5 fallbacks", () => {
    const six = Array.from({ length: 6 }, () => ({ model: "beta/second", voice: "v" }));
    expect(refusalOf(() => chain({ fallbacks: six }))).toMatchObject({ code: "invalid_request", param: "fallbacks" });
    expect(chain({ fallbacks: six.slice(0, 5).map((f, i) => ({ ...f, voice: `v${i}` })) })).toHaveLength(2 + 2 * 5);
  });

  test("each fallback is checked as the primary, its refusal naming it", () => {
    const bad = (fallbacks: TtsRequest["fallbacks"], over: Partial<TtsRequest> = {}) => refusalOf(() => chain({ fallbacks, ...over }));
    expect(
      bad([
        { model: "beta/second", voice: "v" },
        { model: "nope", voice: "v" },
      ]),
    ).toMatchObject({ code: "model_not_found", param: "fallbacks[1].model" });
    expect(bad([{ model: "ears/one" }])).toMatchObject({ code: "model_not_found", param: "fallbacks[0].model", message: "fallbacks[0].model: model ears/one is not a tts model" });
    expect(bad([{ model: "beta/second", voice: "v" }, { model: "gamma/voiced" }])).toMatchObject({ code: "voice_required", param: "fallbacks[1].voice" });
    // The format the session carries: a fallback that cannot make it is refused, not dropped.
    expect(bad([{ model: "delta/pcm-only" }], { format: "mp3" })).toMatchObject({ code: "invalid_output_format", param: "fallbacks[0].model" });
    // A speed only some models' providers honour: the one none of whose providers can is named.
    expect(
      bad(
        [
          { model: "gamma/voiced", voice: "v" },
          { model: "beta/second", voice: "v" },
        ],
        { speed: 1.5 },
      ),
    ).toMatchObject({ code: "invalid_request", param: "fallbacks[1].model" });
    expect(planTts(catalogue, request({ speed: 1.5, fallbacks: [{ model: "gamma/voiced", voice: "v" }] })).candidates.map((c) => c.provider.id)).toEqual(["alpha", "gamma"]);
  });

  test("a session opens a fallback model's candidate with its own voice, the primary's with the request's", () => {
    const [first, , fallback] = planTts(catalogue, request()).candidates as Candidate[];
    expect(voiceOf(first!, "asked")).toBe("asked");
    expect(voiceOf(fallback!, "asked")).toBe("v-gamma");
    expect(voiceOf({ ...fallback!, voice: undefined }, "asked")).toBeUndefined();
  });
});

describe("the voice step on a chain", () => {
  const lists = (names: Record<string, string[]>) => ({
    providers: {
      get: (id: string): TtsProvider | undefined =>
        names[id] ? ({ id, open: () => Promise.reject(new Error("no")), voices: async () => [], voiceNames: async () => new Set(names[id]) } as TtsProvider) : undefined,
    },
    customVoices: { routeOf: () => undefined },
  });

  test("each model's voice is judged against its own providers' lists", async () => {
    const plan = planTts(catalogue, request());
    const kept = await planVoice(plan, "t1", lists({ alpha: ["other"], gamma: ["v-gamma"], delta: ["v-second"] }));
    expect(kept.candidates.map((c) => `${c.provider.id}:${c.voice}`)).toEqual(["beta:v-main", "gamma:v-gamma", "beta:v-second", "delta:v-second"]);
  });

  test("a fallback's voice that none of its providers has is refused naming fallbacks[i].voice", async () => {
    const plan = planTts(catalogue, request());
    expect(await asyncRefusalOf(() => planVoice(plan, "t1", lists({ gamma: ["someone-else"] })))).toEqual({
      code: "invalid_request",
      param: "fallbacks[0].voice",
      message: 'fallbacks[0].voice "v-gamma" is not a voice of gamma',
    });
  });
});

describe("a cloned voice in a fallback", () => {
  const withClone = (status: "active" | "processing") => ({
    providers: { get: () => undefined },
    customVoices: { routeOf: (voice: string) => (voice === "clone-1" ? { tenantId: "owner", provider: "delta", status } : undefined) },
  });
  const plan = () =>
    planTts(
      catalogue,
      request({
        fallbacks: [
          { model: "gamma/voiced", voice: "v-gamma" },
          { model: "beta/second", voice: "clone-1" },
        ],
      }),
    );

  test("is its owner's, at the provider that made it, as the primary's would be", async () => {
    const kept = await planVoice(plan(), "owner", withClone("active"));
    expect(kept.candidates.filter((c) => c.fallback === 1).map((c) => `${c.provider.id}:${c.voice}`)).toEqual(["delta:clone-1"]);
  });

  test("another tenant is told it is no voice, naming fallbacks[i].voice; the owner, while it is not ready, why", async () => {
    expect(await asyncRefusalOf(() => planVoice(plan(), "intruder", withClone("active")))).toEqual({
      code: "invalid_request",
      param: "fallbacks[1].voice",
      message: 'fallbacks[1].voice "clone-1" is not a voice of delta',
    });
    expect(await asyncRefusalOf(() => planVoice(plan(), "owner", withClone("processing")))).toMatchObject({
      code: "invalid_request",
      param: "fallbacks[1].voice",
      message: expect.stringMatching(/^fallbacks\[1\]\.voice: the cloned voice clone-1 is processing/),
    });
  });
});

describe("an STT chain", () => {
  const family = (name: string, over: Partial<SttFamily> = {}): SttFamily => ({
    name,
    portableOptions: ["language"],
    turnDetector: "none",
    turnStyles: ["acoustic"],
    commitFrame: true,
    interimDefault: true,
    inputFormats: ["pcm_16000"],
    audioOptions: {},
    passthrough: false,
    ...over,
  });
  const families: Record<string, SttFamily> = { "ears-1": family("One"), "ears-2": family("Two", { portableOptions: [] }) };
  const sttProvider = (id: string) => (id === "alpha" ? ({ id, family: (model: string) => families[model], open: async () => Promise.reject(new Error("no")) } as unknown as SttProvider) : undefined);
  const plan = (over: Partial<Parameters<typeof planStt>[2]> = {}) =>
    planStt(catalogue, sttProvider, { model: "ears/one", audioFormat: "pcm_16000", portable: {}, options: {}, preferences: NO_PREFERENCES, fallbacks: [{ model: "ears/two" }], ...over });

  test("one provider serving two models of the chain: each candidate keeps its model's family", () => {
    const p = plan();
    expect(p.candidates.map((c) => `${c.provider.id}:${c.canonical}:${c.fallback ?? "primary"}`)).toEqual(["alpha:ears/one:primary", "alpha:ears/two:0"]);
    expect(p.families.get(familyKey("alpha", "ears/one"))?.name).toBe("One");
    expect(p.families.get(familyKey("alpha", "ears/two"))?.name).toBe("Two");
  });

  test("a fallback whose family cannot honour the request is refused naming it", () => {
    expect(refusalOf(() => plan({ portable: { language: "en" } }))).toMatchObject({ code: "unsupported_stt_option", param: "fallbacks[0].model" });
  });

  test("a voice on an STT fallback is refused", () => {
    expect(refusalOf(() => plan({ fallbacks: [{ model: "ears/two", voice: "x" }] }))).toMatchObject({ param: "fallbacks[0].voice" });
  });
});

describe("fallbacks as the wires give them", () => {
  test("the array, and its JSON text", () => {
    expect(fallbacksOf([{ model: "a", voice: "v" }, { model: "b" }], "tts")).toEqual([{ model: "a", voice: "v" }, { model: "b" }]);
    expect(fallbacksOfText(['[{"model":"a"}]'], "stt")).toEqual([{ model: "a" }]);
    expect(fallbacksOfText([], "stt")).toBeUndefined();
    expect(fallbacksOfText([""], "stt")).toBeUndefined();
    expect(fallbacksOf(undefined, "tts")).toBeUndefined();
  });

  test("bad JSON, a wrong shape, more than 5: invalid_request naming the member", () => {
    const bad = (fn: () => unknown) => refusalOf(fn);
    expect(bad(() => fallbacksOfText(["[{model"], "tts"))).toMatchObject({ code: "invalid_request", param: "fallbacks" });
    expect(bad(() => fallbacksOf({ model: "a" }, "tts"))).toMatchObject({ code: "invalid_request", param: "fallbacks" });
    expect(
      bad(() =>
        fallbacksOf(
          Array.from({ length: 6 }, () => ({ model: "a" })),
          "tts",
        ),
      ),
    ).toMatchObject({ code: "invalid_request", param: "fallbacks" });
    expect(bad(() => fallbacksOf([{ model: "a" }, "b"], "tts"))).toMatchObject({ param: "fallbacks[1]" });
    expect(bad(() => fallbacksOf([{ voice: "v" }], "tts"))).toMatchObject({ param: "fallbacks[0].model" });
    expect(bad(() => fallbacksOf([{ model: "a", voice: 3 }], "tts"))).toMatchObject({ param: "fallbacks[0].voice" });
    expect(bad(() => fallbacksOf([{ model: "a", speed: 2 }], "tts"))).toMatchObject({ param: "fallbacks[0].speed" });
    expect(bad(() => fallbacksOf([{ model: "a", voice: "v" }], "stt"))).toMatchObject({ param: "fallbacks[0].voice" });
    expect(bad(() => fallbacksOf([{}], "tts", "pipeline.tts.fallbacks"))).toMatchObject({ param: "pipeline.tts.fallbacks[0].model" });
  });

  test("the documents describe an entry as it is read: another member (voice on STT) is refused, an empty model or voice too", () => {
    expect(fallbacksSchema("stt")).toMatchObject({ maxItems: 5, items: { additionalProperties: false, required: ["model"], properties: { model: { minLength: 1 } } } });
    expect(Object.keys((fallbacksSchema("stt").items as { properties: object }).properties)).toEqual(["model"]);
    expect(fallbacksSchema("tts")).toMatchObject({ items: { additionalProperties: false, properties: { voice: { minLength: 1 } } } });
  });

  test("a field or query parameter given twice, or a file where its text should be, is refused, not read in part", () => {
    expect(refusalOf(() => fallbacksOfText(['[{"model":"a"}]', '[{"model":"b"}]'], "tts"))).toMatchObject({
      code: "invalid_request",
      param: "fallbacks",
      message: expect.stringContaining("more than once"),
    });
    expect(refusalOf(() => fallbacksOfText(['[{"model":"a"}]', ""], "stt"))).toMatchObject({ code: "invalid_request", param: "fallbacks" });
    expect(refusalOf(() => fallbacksOfText([new Blob(['[{"model":"a"}]'])], "stt"))).toMatchObject({ code: "invalid_request", param: "fallbacks" });
  });
});
