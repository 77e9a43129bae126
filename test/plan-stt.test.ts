import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { ProviderSpec } from "../src/catalogue/types.ts";
import { ApiError } from "../src/errors.ts";
import { planStt } from "../src/planning/plan-stt.ts";
import type { SttRequest } from "../src/planning/stt-request.ts";
import type { SttFamily, SttProvider } from "../src/providers/stt-types.ts";
import { familyKey } from "../src/routing/candidate.ts";
import { NO_PREFERENCES } from "../src/routing/preferences.ts";
import { nativeSttParam, readSttQuery } from "../src/planning/stt-fields.ts";

// The STT planner on the typed request: one model served by two families that honour different
// things. The planner reads only the families and whether an adapter streams, so the providers
// here are that much of one.

const family = (name: string, over: Partial<SttFamily> = {}): SttFamily => ({
  name,
  portableOptions: ["language", "interim_results", "speech_threshold", "silence_duration_ms"],
  turnDetector: "none",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_16000", "pcm_8000"],
  audioOptions: { sampleRate: "sample_rate" },
  passthrough: false,
  ...over,
});
const FAMILIES: Record<string, SttFamily> = {
  plain: family("Plain"),
  rich: family("Rich", {
    portableOptions: ["language", "interim_results", "keyterms", "speech_threshold"],
    turnStyles: ["acoustic", "semantic"],
    passthrough: true,
    optionRanges: { speech_threshold: [0.2, 0.8] },
  }),
};
const provider = (id: string): SttProvider =>
  ({
    id,
    family: () => FAMILIES[id],
    open: async () => Promise.reject(new Error("not opened here")),
    passthrough: id === "rich" ? async () => Promise.reject(new Error("not opened here")) : undefined,
  }) as SttProvider;
const spec = (id: string): ProviderSpec => ({
  id,
  name: id,
  kind: "cloud",
  requiresVoice: false,
  defaults: {},
  bindings: [{ capability: "stt", id: `${id}-ears`, canonical: "shared/ears", streaming: true, synchronous: false }],
});
const catalogue = new Catalogue({ providers: [spec("plain"), spec("rich")], models: [{ canonical: "shared/ears", name: "Ears", capability: "stt", aliases: [] }] });

const request = (over: Partial<SttRequest> = {}): SttRequest => ({ model: "shared/ears", audioFormat: "pcm_16000", portable: {}, options: {}, preferences: NO_PREFERENCES, ...over });
const plan = (over: Partial<SttRequest> = {}) => planStt(catalogue, provider, request(over));
const providers = (over: Partial<SttRequest> = {}) => plan(over).candidates.map((b) => b.provider.id);

function refusalOf(fn: () => unknown): { code: string; param: unknown; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, param: err.extra.param, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("planStt", () => {
  test("defaults: one channel, automatic turns and commits, normalized events, the VAD's defaults", () => {
    const p = plan();
    expect(p).toMatchObject({ audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, bytesPerSecond: 32000, commitStrategy: "auto", turnDetection: "auto", eventFormat: "normalized" });
    expect(p.candidates.map((b) => b.provider.id)).toEqual(["plain", "rich"]);
    expect([...p.families.keys()]).toEqual([familyKey("plain", "shared/ears"), familyKey("rich", "shared/ears")]);
  });

  test("the model is required once, by routing; the audio format is required, naming the member", () => {
    expect(refusalOf(() => plan({ model: undefined })).code).toBe("model_required");
    expect(refusalOf(() => plan({ audioFormat: undefined }))).toMatchObject({ code: "invalid_request", param: "audioFormat" });
    expect(refusalOf(() => plan({ model: undefined, audioFormat: undefined, channels: 0 })).code).toBe("model_required");
  });

  test("numbers out of range are refused naming the member; text that was no number comes as NaN and is refused too", () => {
    expect(refusalOf(() => plan({ channels: 9 }))).toMatchObject({ param: "channels", message: "channels must be a number from 1 to 8" });
    expect(refusalOf(() => plan({ channels: 1.5 }))).toMatchObject({ param: "channels", message: "channels must be a whole number" });
    expect(refusalOf(() => plan({ portable: { speech_threshold: 1.5 } }))).toMatchObject({ param: "portable.speech_threshold", message: "speech_threshold must be a number from 0 to 1" });
    expect(refusalOf(() => plan({ portable: { silence_duration_ms: Number.NaN } }))).toMatchObject({ param: "portable.silence_duration_ms", message: "silence_duration_ms must be a number >= 0" });
  });

  test("the families are judged: candidates that cannot honour the request are left out, and when none can, the first refusal names the member", () => {
    expect(providers({ portable: { keyterms: ["voxroute"] } })).toEqual(["rich"]);
    expect(providers({ turnDetection: "semantic" })).toEqual(["rich"]);
    expect(providers({ portable: { speech_threshold: 0.9 } })).toEqual(["plain"]);
    expect(providers({ eventFormat: "provider" })).toEqual(["rich"]);
    expect(refusalOf(() => plan({ portable: { keyterms: ["x"] }, preferences: { ...NO_PREFERENCES, only: ["plain"] } }))).toMatchObject({ code: "unsupported_stt_option", param: "portable.keyterms" });
    expect(refusalOf(() => plan({ commitStrategy: "manual", preferences: { ...NO_PREFERENCES, only: ["rich"] }, portable: { speech_threshold: 0.1 } }))).toMatchObject({
      code: "unsupported_stt_option",
      param: "portable.speech_threshold",
    });
    expect(refusalOf(() => plan({ options: { sample_rate: "8000" } }))).toMatchObject({ code: "conflicting_audio_format", param: "options" });
    expect(refusalOf(() => plan({ audioFormat: "pcm_24000" }))).toMatchObject({ code: "invalid_request", param: "audioFormat" });
  });

  test("the portable settings reach the session: language, interim results, the VAD's", () => {
    const p = plan({ portable: { language: "de", interim_results: false, speech_threshold: 0.6, silence_duration_ms: 400 } });
    expect(p).toMatchObject({ language: "de", interim: false, vad: { speechThreshold: 0.6, silenceDurationMs: 400 } });
  });
});

describe("the native names of the planner's members", () => {
  test("/v1/stt renames members to its query's parameters", () => {
    const names = ["audioFormat", "commitStrategy", "turnDetection", "eventFormat", "options", "channels", "portable.speech_threshold", "model"].map(nativeSttParam);
    expect(names).toEqual(["audio_format", "commit_strategy", "turn_detection", "event_format", "provider_options", "channels", "speech_threshold", "model"]);
    expect(nativeSttParam(undefined)).toBeUndefined();
  });
});

describe("the /v1/stt query as a typed request", () => {
  test("routing, formats, portable options and provider options land in their members; a number as text that is none is NaN for the planner", () => {
    const read = readSttQuery(
      new URLSearchParams(
        "model=shared/ears&provider=rich&audio_format=pcm_8000&channels=2&commit_strategy=manual&speech_threshold=x&silence_duration_ms=&interim_results=false&language=de&keyterms=a&keyterms=b&provider_options[tier]=fast&provider_only=rich",
      ),
    );
    expect(read).toMatchObject({ model: "shared/ears", provider: "rich", audioFormat: "pcm_8000", channels: 2, commitStrategy: "manual", options: { tier: "fast" }, preferences: { only: ["rich"] } });
    expect(read.portable).toMatchObject({ interim_results: false, language: "de", keyterms: ["a", "b"] });
    expect(read.portable.speech_threshold).toBeNaN();
    expect(read.portable.silence_duration_ms).toBeNaN();
  });

  test("what is wrong as written is refused by the reader, in the query's names", () => {
    expect(refusalOf(() => readSttQuery(new URLSearchParams("colour=blue")))).toMatchObject({ param: "colour" });
    expect(refusalOf(() => readSttQuery(new URLSearchParams("audio_format=pcm_11025")))).toMatchObject({ param: "audio_format" });
    expect(refusalOf(() => readSttQuery(new URLSearchParams("interim_results=yes")))).toMatchObject({ param: "interim_results" });
  });
});
