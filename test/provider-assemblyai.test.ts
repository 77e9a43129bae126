import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { streamingUrl } from "../src/providers/assemblyai/streaming-stt.ts";
import { AssemblyAiStt } from "../src/providers/assemblyai/stt.ts";
import { ProviderError } from "../src/errors.ts";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi, type AssemblyAiFault } from "./fakes/assemblyai.ts";
import { assemblyAiAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { expectSilenceUnheard, expectUpstreamErrorUnbilled, speechOgg, speechOggDigest, transcribeSpeechOgg } from "./helpers/speech-file.ts";

// AssemblyAI file transcription against its fake, through /v1/stt/transcriptions: upload, job,
// polling, and what each failure costs (nothing).

const fake = startFakeAssemblyAi();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(assemblyAiAt(fake));
});
afterAll(() => stopServerAndFakes(server, fake));

const upload = (key: string, model = "universal") => transcribeSpeechOgg(server, key, model);

describe("AssemblyAI through /v1/stt/transcriptions", () => {
  test("the file is uploaded, a job submitted and polled to completion; words become segments; whole seconds billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const res = await upload(key, "slam-1");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      provider: "assemblyai",
      model: "assemblyai/slam-1",
      text: "Thank you very much for your help.",
      segments: [{ text: "Thank you very much for your help.", start_ms: 0, end_ms: 2750 }],
      billed_seconds: 3,
    });
    const uploaded = fake.uploads.at(-1)!;
    expect(uploaded).toEqual({ file: await speechOggDigest(), url: expect.stringContaining("/files/"), authorization: FAKE_ASSEMBLYAI_KEY });
    const job = fake.jobs.at(-1)!;
    expect(job.body).toEqual({ audio_url: uploaded.url, speech_model: "slam-1", language_code: "en" });
    expect(job.polls).toBe(3);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "assemblyai", status: "completed", usageAmount: 3 });
  });

  test("a WAV of digital silence is uploaded as sent, and nothing is heard in it", () => expectSilenceUnheard(server, "universal", "assemblyai", () => fake.uploads.at(-1)!.file));

  for (const fault of ["429", "500"] as AssemblyAiFault[]) {
    test(`${fault}: 502 upstream_error, nothing billed`, () => expectUpstreamErrorUnbilled(server, "universal", () => fake.fault(fault)));
  }

  test("a job AssemblyAI fails (e.g. no audio in the file) is the caller's 422 with its reason, nothing billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("failed");
    const res = await upload(key);
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain("Transcoding failed");
    expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", credits: 0 });
  });

  test("a job that never finishes is given up at the job timeout, as a retryable failure", async () => {
    fake.fault("never");
    const adapter = new AssemblyAiStt({ apiKey: FAKE_ASSEMBLYAI_KEY, baseUrl: fake.url, connectTimeoutMs: 1000, idleTimeoutMs: 300, jobTimeoutMs: 400 });
    const err = await adapter.transcribe({ model: "universal", bytes: new Uint8Array(await speechOgg()), container: "Ogg", seconds: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringContaining("did not finish in time") });
  });
});

describe("the Universal-Streaming URL", () => {
  test("ASSEMBLYAI_STREAMING_URL wins; else AssemblyAI's api host becomes its streaming host, any other base keeps its host", () => {
    expect(streamingUrl("https://api.assemblyai.com")).toBe("wss://streaming.assemblyai.com/v3/ws");
    expect(streamingUrl("https://api.eu.assemblyai.com")).toBe("wss://streaming.eu.assemblyai.com/v3/ws");
    expect(streamingUrl("http://127.0.0.1:4100")).toBe("ws://127.0.0.1:4100/v3/ws");
    expect(streamingUrl("https://proxy.example/assemblyai/")).toBe("wss://proxy.example/assemblyai/v3/ws");
    expect(streamingUrl("https://api.assemblyai.com", "wss://streaming.example/v3/ws")).toBe("wss://streaming.example/v3/ws");
  });
});
