import { afterAll, describe, expect, test } from "bun:test";
import { DeepgramClient } from "@deepgram/sdk";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";

// The Deepgram fake must be good enough for the official SDK pointed at it.

const fake = startFakeDeepgram();
afterAll(() => fake.stop());

const environment = { base: fake.http, production: fake.ws, agent: fake.ws, agentRest: fake.http };

describe("the Deepgram fake, through the official SDK", () => {
  test("speak.v1.audio.generate: Aura answers real linear16 speech at the asked rate", async () => {
    const client = new DeepgramClient({ apiKey: FAKE_DEEPGRAM_KEY, environment } as never);
    const res = await client.speak.v1.audio.generate({ text: "Hello from Aura.", model: "aura-2-thalia-en", encoding: "linear16", sample_rate: 16000, container: "none" });
    const audio = new Uint8Array(await res.arrayBuffer());
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.7);
    expect(fake.speak.at(-1)).toEqual({
      query: { model: "aura-2-thalia-en", encoding: "linear16", sample_rate: "16000", container: "none" },
      body: { text: "Hello from Aura." },
      authorization: `Token ${FAKE_DEEPGRAM_KEY}`,
    });
  });

  type NovaMessage = { type: string; is_final?: boolean; channel?: { alternatives: { transcript: string }[] } };
  /** A Nova session through the SDK: the frames, then Finalize and CloseStream; every message back. */
  async function nova(frames: Uint8Array[]): Promise<NovaMessage[]> {
    const client = new DeepgramClient({ apiKey: FAKE_DEEPGRAM_KEY, environment } as never);
    const socket = await client.listen.v1.connect({ model: "nova-3", encoding: "linear16", sample_rate: 16000, interim_results: "true", vad_events: "true", reconnectAttempts: 0 } as never);
    const messages: NovaMessage[] = [];
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("message", (m) => void messages.push(m as never));
    socket.connect(); // this SDK opens lazily
    await socket.waitForOpen();
    for (const frame of frames) socket.sendMedia(frame);
    socket.sendFinalize({ type: "Finalize" });
    socket.sendCloseStream({ type: "CloseStream" });
    await closed;
    return messages;
  }
  const transcripts = (messages: NovaMessage[]) => messages.flatMap((m) => (m.type === "Results" ? [m.channel!.alternatives[0]!.transcript] : []));

  test("listen.v1.connect: audio in, interim and final Results and the close out; the audio's digest kept", async () => {
    const pcm = speech("Thank you very much for your help.", 16000);
    const frames = Array.from({ length: Math.ceil(pcm.length / 640) }, (_, i) => pcm.slice(i * 640, (i + 1) * 640));
    const messages = await nova(frames);
    expect(messages.map((m) => m.type)).toContain("SpeechStarted");
    expect(messages.some((m) => m.type === "Results" && m.is_final === false)).toBe(true);
    expect(messages.filter((m) => m.type === "Results" && m.is_final).length).toBe(2);
    expect(transcripts(messages)[0]).toStartWith("thank");
    expect(messages.at(-1)!.type).toBe("Metadata");
    expect(fake.connections.at(-1)!.query.get("model")).toBe("nova-3");
    expect(fake.connections.at(-1)!.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    expect(fake.connections.at(-1)!.received.digest()).toEqual(digestOf(frames));
  });

  test("listen.v1.connect: digital silence is heard as nothing, no SpeechStarted and empty transcripts", async () => {
    const messages = await nova(Array.from({ length: 50 }, () => new Uint8Array(640)));
    expect(messages.map((m) => m.type)).not.toContain("SpeechStarted");
    expect(transcripts(messages).length).toBeGreaterThan(2);
    expect(transcripts(messages).every((t) => t === "")).toBe(true);
    expect(fake.connections.at(-1)!.received.heardSound).toBe(false);
    expect(fake.connections.at(-1)!.received.digest()).toEqual(digestOf([new Uint8Array(50 * 640)]));
  });

  test("listen.v2.connect (Flux): turns found in real speech, eager guesses, ForceEndTurn, sequence ids", async () => {
    const client = new DeepgramClient({ apiKey: FAKE_DEEPGRAM_KEY, environment } as never);
    const socket = await client.listen.v2.connect({
      model: "flux-general-en",
      encoding: "linear16",
      sample_rate: 16000,
      eager_eot_threshold: 0.5,
      keyterm: ["voxroute"],
      reconnectAttempts: 0,
    } as never);
    const messages: { type: string; event?: string; sequence_id: number; transcript?: string; trigger?: string }[] = [];
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("message", (m) => void messages.push(m as never));
    socket.connect();
    await socket.waitForOpen();
    // Two phrases with Flite's own 0.4 s pause between them, a second of silence, then a phrase cut short by ForceEndTurn.
    const audio = [speech("thank you", 16000), speech("very much", 16000), new Uint8Array(32_000), speech("for your help", 16000)];
    for (const piece of audio) socket.sendMedia(piece);
    socket.sendForceEndTurn({ type: "ForceEndTurn" });
    socket.sendCloseStream({ type: "CloseStream" });
    await closed;

    expect(messages[0]).toMatchObject({ type: "Connected", sequence_id: 0 });
    expect(messages.map((m) => m.sequence_id)).toEqual(messages.map((_, i) => i));
    const events = messages.filter((m) => m.type === "TurnInfo").map((m) => m.event);
    expect(events.filter((e) => e !== "Update")).toEqual(["StartOfTurn", "EagerEndOfTurn", "TurnResumed", "EagerEndOfTurn", "EndOfTurn", "StartOfTurn", "EndOfTurn"]);
    expect(events).toContain("Update");
    const ends = messages.filter((m) => m.event === "EndOfTurn");
    expect(ends.map((m) => m.trigger)).toEqual(["model", "manual"]);
    expect(ends[0].transcript).toMatch(/^thank you/);
    expect(fake.flux.at(-1)!.query.get("eager_eot_threshold")).toBe("0.5");
    expect(fake.flux.at(-1)!.query.getAll("keyterm")).toEqual(["voxroute"]);
    expect(fake.flux.at(-1)!.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    expect(fake.flux.at(-1)!.received.digest()).toEqual(digestOf(audio));
  });

  test("speak.v1.connect (Aura WebSocket): Metadata, real speech in binary frames, Flushed, Cleared, Close", async () => {
    const client = new DeepgramClient({ apiKey: FAKE_DEEPGRAM_KEY, environment } as never);
    const socket = await client.speak.v1.connect({ model: "aura-2-thalia-en", encoding: "linear16", sample_rate: "16000", reconnectAttempts: 0 } as never);
    const messages: unknown[] = [];
    const closed = new Promise<{ code: number }>((resolve) => socket.on("close", (e) => resolve(e as never)));
    socket.on("message", (m) => void messages.push(m));
    socket.connect();
    await socket.waitForOpen();
    socket.sendText({ type: "Speak", text: "Hello from Aura" });
    socket.sendFlush({ type: "Flush" });
    socket.sendText({ type: "Speak", text: "never spoken" });
    socket.sendClear({ type: "Clear" });
    socket.sendClose({ type: "Close" });
    expect((await closed).code).toBe(1000);

    expect(messages[0]).toMatchObject({ type: "Metadata", model_name: "aura-2-thalia-en" });
    const audio = messages.filter((m): m is Blob => m instanceof Blob);
    const bytes = (await Promise.all(audio.map((b) => b.arrayBuffer()))).reduce((n, b) => n + b.byteLength, 0);
    expect(bytes / 2 / 16000).toBeGreaterThan(0.7);
    expect(messages.filter((m) => !(m instanceof Blob)).slice(1)).toEqual([
      { type: "Flushed", sequence_id: 0 },
      { type: "Cleared", sequence_id: 1 },
    ]);
    expect(messages.indexOf(audio.at(-1)!)).toBeLessThan(messages.findIndex((m) => (m as { type?: string }).type === "Flushed"));
  });
});

describe("the Deepgram fake's mid-stream faults", () => {
  /** A Nova or Flux socket fed `seconds` of speech in 100 ms frames; what came back, and how it closed (if it did within `waitMs`). */
  async function listen(path: "/v1/listen" | "/v2/listen", seconds: number, waitMs: number) {
    const query = path === "/v1/listen" ? "model=nova-3&encoding=linear16&sample_rate=16000&interim_results=true" : "model=flux-general-en&encoding=linear16&sample_rate=16000";
    const ws = new WebSocket(`${fake.ws}${path}?${query}`, { headers: { Authorization: `Token ${FAKE_DEEPGRAM_KEY}` } } as never);
    const messages: { type: string }[] = [];
    let close: { code: number; reason: string } | undefined;
    ws.onmessage = (e) => messages.push(JSON.parse(e.data as string));
    const closed = new Promise<void>((resolve) => (ws.onclose = (e) => resolve(void (close = { code: e.code, reason: e.reason }))));
    await new Promise((resolve) => (ws.onopen = resolve));
    const pcm = speech("Thank you very much for your help. I would like a cup of coffee, please.", 16000);
    for (let at = 0; at < seconds * 32_000; at += 3200) ws.send(pcm.subarray(at, at + 3200));
    await Promise.race([closed, Bun.sleep(waitMs)]);
    if (!close) ws.close();
    return { messages, close };
  }

  test("kill: the socket is cut at the mark, without a close frame", async () => {
    fake.midStream({ kind: "kill", afterSeconds: 1 });
    const { messages, close } = await listen("/v1/listen", 3, 5000);
    fake.midStream(undefined);
    expect(close?.code).toBe(1006);
    expect(messages.filter((m) => m.type === "Results")).toHaveLength(2); // an interim each 0.5 s, up to the mark
  });

  test("hang: nothing more is answered after the mark, and nothing closes", async () => {
    fake.midStream({ kind: "hang", afterBytes: 32_000 });
    const { messages, close } = await listen("/v1/listen", 3, 1000);
    fake.midStream(undefined);
    expect(close).toBeUndefined();
    expect(messages.filter((m) => m.type === "Results")).toHaveLength(2);
  });

  test("error: Flux sends an Error frame at the mark, then closes 1011; Nova, which has no error event, closes 1011", async () => {
    fake.midStream({ kind: "error", afterSeconds: 1 });
    const { messages, close } = await listen("/v2/listen", 3, 5000);
    expect(messages.at(-1)).toMatchObject({ type: "Error", code: "INTERNAL_SERVER_ERROR" });
    expect(close?.code).toBe(1011);
    const nova = await listen("/v1/listen", 3, 5000);
    fake.midStream(undefined);
    expect(nova.close?.code).toBe(1011);
    expect(nova.messages.filter((m) => m.type === "Results")).toHaveLength(2);
  });
});
