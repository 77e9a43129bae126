import { afterAll, describe, expect, test } from "bun:test";
import { AssemblyAI } from "assemblyai";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi } from "./fakes/assemblyai.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeAssemblyAi();
afterAll(() => fake.stop());
const client = new AssemblyAI({ apiKey: FAKE_ASSEMBLYAI_KEY, baseUrl: fake.url });
const audio = async () => new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer());

describe("the AssemblyAI fake, through the official SDK", () => {
  test("transcripts.transcribe uploads, creates and polls to a completed transcript", async () => {
    const t = await client.transcripts.transcribe({ audio: await audio(), speech_model: "universal", language_code: "en" }, { pollingInterval: 10 });
    expect(t.status).toBe("completed");
    expect(t.text).toBe("Thank you very much for your help.");
    expect(t.words?.length).toBe(7);
    expect(fake.uploads.at(-1)!.bytes).toBeGreaterThan(0);
    expect(fake.jobs.at(-1)!.body).toMatchObject({ speech_model: "universal", language_code: "en" });
  });

  test("a failed job comes back with status error; a bad key is an error", async () => {
    fake.fault("failed");
    const t = await client.transcripts.transcribe({ audio: await audio() }, { pollingInterval: 10 });
    expect(t).toMatchObject({ status: "error", error: expect.stringContaining("Transcoding failed") });
    const bad = new AssemblyAI({ apiKey: "wrong", baseUrl: fake.url });
    expect(await bad.transcripts.transcribe({ audio: await audio() }).then(() => "ok", (e: Error) => e.message)).toContain("Authentication error");
  });
});
