import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AssemblyAI, type SpeechStartedEvent, type TurnEvent } from "assemblyai";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi } from "./fakes/assemblyai.ts";
import { spokenChunks } from "./fakes/assemblyai-streaming.ts";
import { digestOf } from "./fakes/received-audio.ts";

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
    expect(fake.uploads.at(-1)!.file).toEqual(digestOf([await audio()]));
    expect(fake.jobs.at(-1)!.body).toMatchObject({ speech_model: "universal", language_code: "en" });
  });

  test("a failed job comes back with status error; a bad key is an error", async () => {
    fake.fault("failed");
    const t = await client.transcripts.transcribe({ audio: await audio() }, { pollingInterval: 10 });
    expect(t).toMatchObject({ status: "error", error: expect.stringContaining("Transcoding failed") });
    const bad = new AssemblyAI({ apiKey: "wrong", baseUrl: fake.url });
    expect(
      await bad.transcripts.transcribe({ audio: await audio() }).then(
        () => "ok",
        (e: Error) => e.message,
      ),
    ).toContain("Authentication error");
  });
});

describe("the Universal-Streaming fake, through the SDK's StreamingTranscriber", () => {
  // The SDK's streaming client insists on wss: this fake serves TLS with a self-signed certificate.
  const tlsFake = startFakeAssemblyAi({ tls: true });
  const trustCheck = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  beforeAll(() => {
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  });
  afterAll(() => {
    if (trustCheck === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trustCheck;
    tlsFake.stop();
  });
  const transcriber = (apiKey = FAKE_ASSEMBLYAI_KEY) =>
    new AssemblyAI({ apiKey, baseUrl: tlsFake.url }).streaming.transcriber({
      websocketBaseUrl: tlsFake.streamingUrl,
      sampleRate: 16000,
      formatTurns: true,
      keytermsPrompt: ["voxroute"],
      maxConnectionRetries: 0,
    });
  test("connect, stream real speech, receive growing turns, an end of turn with its formatted copy, close", async () => {
    const t = transcriber();
    const turns: TurnEvent[] = [];
    const started: number[] = [];
    t.on("turn", (turn) => turns.push(turn));
    // The SDK dispatches `speechStarted` but leaves it out of on()'s typed overloads.
    (t.on.bind(t) as unknown as (event: string, listener: (ev: SpeechStartedEvent) => void) => void)("speechStarted", (ev) => started.push(ev.timestamp));
    const begin = await t.connect();
    expect(begin).toMatchObject({ type: "Begin", id: expect.any(String) });
    const sent = spokenChunks();
    for (const chunk of sent) t.sendAudio(chunk.buffer as ArrayBuffer);
    await Bun.sleep(100);
    await t.close();

    const conn = tlsFake.streaming.at(-1)!;
    expect(conn.received.digest()).toEqual(digestOf(sent));
    expect(conn.authorization).toBe(FAKE_ASSEMBLYAI_KEY);
    expect(Object.fromEntries(conn.query)).toMatchObject({ sample_rate: "16000", format_turns: "true", keyterms_prompt: '["voxroute"]' });
    expect(conn.texts).toEqual(['{"type":"Terminate"}']);
    expect(started).toHaveLength(1);
    const interims = turns.filter((x) => !x.end_of_turn);
    expect(interims.length).toBeGreaterThan(2);
    expect(interims.every((x) => x.turn_order === 0)).toBe(true);
    const [unformatted, formatted] = turns.filter((x) => x.end_of_turn);
    expect(unformatted).toMatchObject({ turn_is_formatted: false, transcript: "thank you very much for your help", end_of_turn_confidence: 0.9 });
    expect(formatted).toMatchObject({ turn_is_formatted: true, transcript: "Thank you very much for your help." });
    expect(unformatted.words[0].start).toBeLessThan(unformatted.words.at(-1)!.end);
    expect(tlsFake.openSockets()).toBe(0);
  });

  test("ForceEndpoint ends the turn now; a refused handshake and a 4001 close reject connect()", async () => {
    const t = transcriber();
    const ends: TurnEvent[] = [];
    t.on("turn", (turn) => turn.end_of_turn && ends.push(turn));
    await t.connect();
    for (const chunk of spokenChunks().slice(0, 10)) t.sendAudio(chunk.buffer as ArrayBuffer);
    t.forceEndpoint();
    await t.close();
    expect(ends.map((x) => x.turn_is_formatted)).toEqual([false, true]);

    tlsFake.fault("429");
    expect(
      await transcriber()
        .connect()
        .then(
          () => "open",
          (e: Error) => e.message,
        ),
    ).not.toBe("open");
    tlsFake.fault("close-4001");
    const refused = await transcriber()
      .connect()
      .then(
        () => undefined,
        (e: Error & { code?: number }) => e,
      );
    expect(refused).toMatchObject({ code: 4001, message: "Not Authorized" });
  });

  test("an Error frame reaches the SDK's error listener", async () => {
    tlsFake.fault("error-frame");
    const t = transcriber();
    const errors: Error[] = [];
    t.on("error", (e) => errors.push(e));
    await t.connect();
    t.sendAudio(spokenChunks()[0].buffer as ArrayBuffer);
    await Bun.sleep(100);
    await t.close(false);
    expect(errors[0]?.message).toContain("Internal server error");
  });

  test("mid-stream faults: an Error frame once the mark is passed, none before; a killed socket closes the SDK's", async () => {
    const chunks = spokenChunks();
    tlsFake.midStream({ kind: "error", afterBytes: chunks[0]!.byteLength });
    const t = transcriber();
    const errors: Error[] = [];
    t.on("error", (e) => errors.push(e));
    await t.connect();
    tlsFake.midStream(undefined);
    t.sendAudio(chunks[0]!.buffer as ArrayBuffer);
    await Bun.sleep(100);
    expect(errors).toEqual([]);
    t.sendAudio(chunks[1]!.buffer as ArrayBuffer);
    for (let i = 0; i < 100 && !errors.length; i++) await Bun.sleep(10);
    expect(errors[0]?.message).toContain("Internal server error");
    await t.close(false);

    tlsFake.midStream({ kind: "kill", afterBytes: chunks[0]!.byteLength });
    const killed = transcriber();
    const closes: number[] = [];
    killed.on("close", (code) => closes.push(code));
    killed.on("error", () => {});
    await killed.connect();
    tlsFake.midStream(undefined);
    killed.sendAudio(chunks[0]!.buffer as ArrayBuffer);
    killed.sendAudio(chunks[1]!.buffer as ArrayBuffer);
    for (let i = 0; i < 100 && !closes.length; i++) await Bun.sleep(10);
    expect(closes[0]).toBe(1006);
  });
});
