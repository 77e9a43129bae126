import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { ProviderSpec } from "../src/catalogue/types.ts";
import { ApiError } from "../src/errors.ts";
import { planVoice, type VoiceLists } from "../src/planning/plan-voice.ts";
import type { TtsProvider } from "../src/providers/types.ts";
import type { ClonedVoiceRoute } from "../src/voices/custom-voices.ts";

// The planner's voice step on a plan's candidates: providers that list their voices, one that
// cannot, one whose list cannot be had, and cloned voices with their owners.

const provider = (id: string): ProviderSpec => ({
  id,
  name: id,
  kind: "cloud",
  requiresVoice: false,
  defaults: {},
  bindings: [{ capability: "tts", id: `${id}-speech`, canonical: "shared/speech", streaming: true, synchronous: true, formats: ["pcm"] }],
});
const IDS = ["alpha", "beta", "unlisted", "broken"];
const catalogue = new Catalogue({ providers: IDS.map(provider), models: [{ canonical: "shared/speech", name: "Speech", capability: "tts", aliases: [] }] });
const candidates = (...ids: string[]) => catalogue.lookup("shared/speech", "tts").filter((b) => ids.includes(b.provider.id));

const listing = (id: string, names?: string[] | "fails"): TtsProvider => ({
  id,
  open: () => Promise.reject(new Error("not opened here")),
  voices: async () => [],
  ...(names === undefined ? {} : { voiceNames: async () => (names === "fails" ? Promise.reject(new Error("down")) : new Set(names)) }),
});
const clones = new Map<string, ClonedVoiceRoute>([
  ["mine", { tenantId: "t1", provider: "beta", status: "active" }],
  ["fresh", { tenantId: "t1", provider: "beta", status: "processing" }],
]);
const lists: VoiceLists = {
  providers: new Map([
    ["alpha", listing("alpha", ["a1"])],
    ["beta", listing("beta", ["b1"])],
    ["unlisted", listing("unlisted")],
    ["broken", listing("broken", "fails")],
  ]),
  customVoices: { routeOf: (voice) => clones.get(voice) },
};

const voiced = async (voice: string | undefined, ids: string[], tenant: string | undefined) =>
  (await planVoice({ voice, candidates: candidates(...ids) }, tenant, lists)).candidates.map((b) => b.provider.id);

async function refusalOf(fn: () => Promise<unknown>): Promise<ApiError> {
  const err = await fn().then(
    () => undefined,
    (e) => e,
  );
  if (err instanceof ApiError) return err;
  throw err ?? new Error("expected a refusal");
}

describe("planVoice", () => {
  test("no voice: the plan as it is", async () => {
    expect(await voiced(undefined, IDS, "t1")).toEqual(IDS);
  });

  test("a listed voice keeps the candidates that list it or cannot list theirs, in order", async () => {
    expect(await voiced("b1", IDS, "t1")).toEqual(["beta", "unlisted", "broken"]);
    expect(await voiced("a1", ["alpha", "beta"], "t1")).toEqual(["alpha"]);
  });

  test("no candidate takes it: 400 param voice naming the plan's providers", async () => {
    const err = await refusalOf(() => planVoice({ voice: "zz", candidates: candidates("alpha", "beta") }, "t1", lists));
    expect({ code: err.code, status: err.status, param: err.extra.param, message: err.message }).toEqual({
      code: "invalid_request",
      status: 400,
      param: "voice",
      message: 'voice "zz" is not a voice of alpha, beta',
    });
  });

  test("a voice no candidate's provider lists and no clone is (a cloud voice): every candidate, in order, in a plan of its own", async () => {
    const plan = Object.freeze({ voice: "any-cloud-voice", candidates: Object.freeze(candidates("unlisted")) as ReturnType<typeof candidates>, format: "pcm" as const });
    const voicedPlan = await planVoice(plan, "t1", lists);
    expect(voicedPlan.candidates.map((b) => b.provider.id)).toEqual(["unlisted"]);
    expect(voicedPlan).toMatchObject({ voice: "any-cloud-voice", format: "pcm" });
    expect(voicedPlan).not.toBe(plan);
    voicedPlan.candidates.pop(); // the planner's own copy: the plan it was given (kept per query) is untouched
    expect(plan.candidates.length).toBe(1);
    // A clone's name among them is still judged: another tenant is told it is no voice.
    const err = await refusalOf(() => planVoice({ voice: "mine", candidates: candidates("unlisted", "beta") }, "t2", lists));
    expect(err.extra.param).toBe("voice");
  });

  test("the plan's other members are kept", async () => {
    const plan = await planVoice({ voice: "b1", candidates: candidates("alpha", "beta"), format: "pcm" as const }, "t1", lists);
    expect(plan).toMatchObject({ voice: "b1", format: "pcm" });
  });

  test("a cloned voice goes to its provider alone, for its owner once active", async () => {
    expect(await voiced("mine", IDS, "t1")).toEqual(["beta"]);
    expect((await refusalOf(() => planVoice({ voice: "mine", candidates: candidates("alpha") }, "t1", lists))).message).toBe('voice "mine" is not a voice of alpha');
    expect((await refusalOf(() => planVoice({ voice: "mine", candidates: candidates(...IDS) }, "t2", lists))).message).toBe('voice "mine" is not a voice of beta');
    const fresh = await refusalOf(() => planVoice({ voice: "fresh", candidates: candidates(...IDS) }, "t1", lists));
    expect({ param: fresh.extra.param, message: fresh.message }).toEqual({ param: "voice", message: "the cloned voice fresh is processing: GET /v1/custom-voices/fresh tells when it can be used" });
  });

  test("before the payer is known, a clone is judged by its provider only; the owner when the tenant comes", async () => {
    expect(await voiced("mine", IDS, undefined)).toEqual(["beta"]);
    expect(await voiced("fresh", IDS, undefined)).toEqual(["beta"]);
  });
});
