import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { BindingSpec, ProviderSpec } from "../src/catalogue/types.ts";
import { ApiError } from "../src/errors.ts";
import { NO_PREFERENCES, preferencesFromBody, preferencesFromQuery, type ProviderPreferences } from "../src/routing/preferences.ts";
import { resolve, type RouteRequest } from "../src/routing/resolve.ts";
import { ttsBinding } from "./helpers/planning.ts";

// One model ("shared/voice") served by four providers with different abilities, plus a few
// single-provider models, so that every preference and need can be combined.

const tts = ttsBinding;

const provider = (id: string, bindings: BindingSpec[], requiresVoice = false): ProviderSpec => ({
  id,
  name: id.toUpperCase(),
  kind: "cloud",
  requiresVoice,
  defaults: {},
  bindings,
});

const catalogue = new Catalogue({
  providers: [
    provider("alpha", [tts("voice-a", "shared/voice"), tts("solo", "alpha/solo")]),
    provider("beta", [tts("voice-b", "shared/voice", { formats: ["pcm"] })]),
    provider("gamma", [tts("voice-g", "shared/voice", { streaming: false })], true),
    provider("delta", [tts("voice-d", "shared/voice")], true),
    provider("ears", [{ capability: "stt", id: "listen", canonical: "ears/listen", streaming: true, synchronous: false }]),
  ],
  models: [
    { canonical: "shared/voice", name: "Shared", capability: "tts", aliases: ["voice-alias"] },
    { canonical: "alpha/solo", name: "Solo", capability: "tts", aliases: [] },
    { canonical: "ears/listen", name: "Listen", capability: "stt", aliases: [] },
  ],
});

function route(over: Omit<Partial<RouteRequest>, "preferences"> & { preferences?: Partial<ProviderPreferences> } = {}): string[] {
  const req: RouteRequest = {
    capability: "tts",
    model: "shared/voice",
    mode: "streaming",
    voice: "v1",
    ...over,
    preferences: { ...NO_PREFERENCES, ...over.preferences },
  };
  return resolve(catalogue, req).map((b) => b.provider.id);
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  throw new Error("expected an ApiError");
}

describe("model names", () => {
  test("canonical slug, alias, bare provider id and provider/id all resolve", () => {
    expect(route({ model: "shared/voice" })).toEqual(["alpha", "beta", "delta"]);
    expect(route({ model: "voice-alias" })).toEqual(["alpha", "beta", "delta"]);
    expect(route({ model: "voice-b" })).toEqual(["beta"]);
    expect(route({ model: "delta/voice-d" })).toEqual(["delta"]);
    expect(route({ model: " alpha/solo " })).toEqual(["alpha"]);
  });

  test("missing, unknown and wrong-capability models are errors", () => {
    expect(errorOf(() => route({ model: undefined }))).toBe("model_required");
    expect(errorOf(() => route({ model: "  " }))).toBe("model_required");
    expect(errorOf(() => route({ model: "nope" }))).toBe("model_not_found");
    expect(errorOf(() => route({ model: "ears/listen" }))).toBe("model_not_found");
    expect(route({ model: "ears/listen", capability: "stt" })).toEqual(["ears"]);
  });
});

describe("needs", () => {
  test("streaming excludes bindings that cannot stream; synchronous keeps them", () => {
    expect(route({ mode: "synchronous" })).toEqual(["alpha", "beta", "gamma", "delta"]);
    expect(errorOf(() => route({ model: "voice-g" }))).toBe("no_matching_provider");
  });

  test("format keeps only providers that produce it", () => {
    expect(route({ format: "mp3" })).toEqual(["alpha", "delta"]);
    expect(route({ format: "pcm" })).toEqual(["alpha", "beta", "delta"]);
    expect(errorOf(() => route({ format: "opus" }))).toBe("invalid_output_format");
  });

  test("without a voice, providers that require one are dropped; none left is voice_required", () => {
    expect(route({ voice: undefined })).toEqual(["alpha", "beta"]);
    expect(errorOf(() => route({ voice: undefined, model: "voice-d" }))).toBe("voice_required");
    expect(errorOf(() => route({ voice: undefined, preferences: { only: ["delta"] } }))).toBe("voice_required");
  });
});

describe("preferences", () => {
  const cases: [Partial<ProviderPreferences>, string[] | string][] = [
    [{}, ["alpha", "beta", "delta"]],
    [{ only: ["beta"] }, ["beta"]],
    [{ only: ["delta", "alpha"] }, ["alpha", "delta"]], // only filters, it does not order
    [{ only: ["nobody"] }, "provider_not_allowed"],
    [{ ignore: ["alpha"] }, ["beta", "delta"]],
    [{ ignore: ["alpha", "beta", "delta"] }, "provider_not_allowed"],
    [{ ignore: ["nobody"] }, ["alpha", "beta", "delta"]],
    [{ order: ["delta"] }, ["delta", "alpha", "beta"]],
    [{ order: ["delta", "beta"] }, ["delta", "beta", "alpha"]],
    [{ order: ["nobody", "beta"] }, ["beta", "alpha", "delta"]],
    [{ order: ["delta"], only: ["alpha", "delta"] }, ["delta", "alpha"]],
    [{ order: ["alpha"], ignore: ["alpha"] }, ["beta", "delta"]], // ignore wins over order
    [{ only: ["alpha", "beta"], ignore: ["alpha"] }, ["beta"]],
    [{ allowFallbacks: false }, ["alpha"]],
    [{ allowFallbacks: false, order: ["delta"] }, ["delta"]],
    [{ allowFallbacks: false, ignore: ["alpha"] }, ["beta"]],
    [{ allowFallbacks: false, only: ["beta", "delta"], order: ["delta"] }, ["delta"]],
  ];
  for (const [prefs, expected] of cases) {
    test(`${JSON.stringify(prefs)} → ${JSON.stringify(expected)}`, () => {
      if (typeof expected === "string") expect(errorOf(() => route({ preferences: prefs }))).toBe(expected);
      else expect(route({ preferences: prefs })).toEqual(expected);
    });
  }

  test("a provider pin narrows to that provider and respects only/ignore", () => {
    expect(route({ provider: "beta" })).toEqual(["beta"]);
    expect(route({ provider: "beta", preferences: { order: ["delta"] } })).toEqual(["beta"]);
    expect(errorOf(() => route({ provider: "beta", preferences: { ignore: ["beta"] } }))).toBe("provider_not_allowed");
    expect(errorOf(() => route({ provider: "beta", preferences: { only: ["alpha"] } }))).toBe("provider_not_allowed");
    expect(errorOf(() => route({ provider: "ears" }))).toBe("no_matching_provider");
    expect(errorOf(() => route({ provider: "gamma" }))).toBe("no_matching_provider"); // cannot stream
  });

  test("the combination of every filter and the order is applied in one pass", () => {
    expect(route({ format: "mp3", voice: undefined, preferences: { order: ["delta", "beta"] } })).toEqual(["alpha"]);
    expect(route({ format: "pcm", preferences: { order: ["delta", "beta"], ignore: ["alpha"] } })).toEqual(["delta", "beta"]);
  });
});

describe("preference parsing", () => {
  test("WebSocket query: comma-separated or repeated, blanks dropped; only literal false disables fallbacks", () => {
    const p = preferencesFromQuery(new URLSearchParams("provider_only=a,b&provider_only=c&provider_ignore=x,,&provider_order=c&allow_fallbacks=false"));
    expect(p).toEqual({ only: ["a", "b", "c"], ignore: ["x"], order: ["c"], allowFallbacks: false });
    expect(preferencesFromQuery(new URLSearchParams("allow_fallbacks=no")).allowFallbacks).toBe(true);
    expect(preferencesFromQuery(new URLSearchParams("")).only).toBeUndefined();
  });

  test("HTTP provider object: arrays of ids and a boolean, anything else is invalid_request", () => {
    expect(preferencesFromBody({ only: ["a"], order: ["b"], allow_fallbacks: false })).toEqual({ only: ["a"], ignore: undefined, order: ["b"], allowFallbacks: false });
    expect(preferencesFromBody(undefined)).toEqual(NO_PREFERENCES);
    expect(errorOf(() => preferencesFromBody({ only: "a" }))).toBe("invalid_request");
    expect(errorOf(() => preferencesFromBody({ only: [1] }))).toBe("invalid_request");
    expect(errorOf(() => preferencesFromBody({ allow_fallbacks: "false" }))).toBe("invalid_request");
    expect(errorOf(() => preferencesFromBody(["a"]))).toBe("invalid_request");
  });
});
