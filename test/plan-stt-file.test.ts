import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { planSttFile, type SttFileRequest } from "../src/planning/plan-stt-file.ts";
import type { SttFamily, SttProvider } from "../src/providers/stt-types.ts";
import { NO_PREFERENCES } from "../src/routing/preferences.ts";
import { providerSpec, refusalOf } from "./helpers/planning.ts";

// The file transcription planner: one model served by a provider with a file API only, one that
// streams only (at 24 kHz), and one whose adapter in this build does neither.

const family: SttFamily = {
  name: "Streams",
  portableOptions: ["language"],
  turnDetector: "none",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_24000"],
  audioOptions: {},
  passthrough: false,
};
const PROVIDERS: Record<string, SttProvider> = {
  files: { id: "files", family: () => undefined, transcribe: async () => Promise.reject(new Error("not run here")) } as unknown as SttProvider,
  streams: { id: "streams", family: () => family, open: async () => Promise.reject(new Error("not opened here")) } as unknown as SttProvider,
  idle: { id: "idle", family: () => undefined } as unknown as SttProvider,
};
const spec = (id: string) => providerSpec(id, { capability: "stt", streaming: true, synchronous: true }, "ears");
const catalogue = new Catalogue({ providers: ["idle", "files", "streams"].map(spec), models: [{ canonical: "shared/ears", name: "Ears", capability: "stt", aliases: [] }] });

const plan = (over: Partial<SttFileRequest> = {}) => planSttFile(catalogue, (id) => PROVIDERS[id], { model: "shared/ears", preferences: NO_PREFERENCES, ...over });
describe("planSttFile", () => {
  test("the file APIs: the routed candidates whose adapter transcribes files, in order", () => {
    expect(
      plan()
        .fileCandidates()
        .map((b) => b.provider.id),
    ).toEqual(["files"]);
  });

  test("why there are none is kept for when the file goes that way, not thrown while planning", () => {
    const unknown = plan({ model: "nothing/here" });
    expect(refusalOf(() => unknown.fileCandidates()).code).toBe("model_not_found");
    const none = plan({ preferences: { ...NO_PREFERENCES, only: ["streams", "idle"] } });
    expect(refusalOf(() => none.fileCandidates())).toMatchObject({ code: "no_matching_provider", message: "no provider in this build transcribes files with shared/ears" });
  });

  test("a live caller's plan has the streaming session, at the first rate its model's providers take, final segments only", () => {
    expect(plan().streaming).toBeUndefined();
    const live = plan({ live: true, language: "de" }).streaming!;
    expect(live.candidates.map((b) => b.provider.id)).toEqual(["streams"]);
    expect(live).toMatchObject({ audioFormat: "pcm_24000", sampleRate: 24000, interim: false, language: "de" });
  });

  test("a model no provider streams: no streaming session, the file APIs serve the live caller", () => {
    const live = plan({ live: true, preferences: { ...NO_PREFERENCES, only: ["files"] } });
    expect(live.streaming).toBeUndefined();
    expect(live.fileCandidates().map((b) => b.provider.id)).toEqual(["files"]);
  });
});
