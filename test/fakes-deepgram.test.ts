import { afterAll, describe, expect, test } from "bun:test";
import { DeepgramClient } from "@deepgram/sdk";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";

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

  test("listen.v1.connect: audio in, interim and final Results and the close out", async () => {
    const client = new DeepgramClient({ apiKey: FAKE_DEEPGRAM_KEY, environment } as never);
    const socket = await client.listen.v1.connect({ model: "nova-3", encoding: "linear16", sample_rate: 16000, interim_results: "true", vad_events: "true", reconnectAttempts: 0 } as never);
    const messages: { type: string; is_final?: boolean }[] = [];
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("message", (m: { type: string; is_final?: boolean }) => void messages.push(m));
    socket.connect(); // this SDK opens lazily
    await socket.waitForOpen();
    for (let i = 0; i < 50; i++) socket.sendMedia(new Uint8Array(640));
    socket.sendFinalize({ type: "Finalize" });
    socket.sendCloseStream({ type: "CloseStream" });
    await closed;
    expect(messages.map((m) => m.type)).toContain("SpeechStarted");
    expect(messages.some((m) => m.type === "Results" && m.is_final === false)).toBe(true);
    expect(messages.filter((m) => m.type === "Results" && m.is_final).length).toBe(2);
    expect(messages.at(-1)!.type).toBe("Metadata");
    expect(fake.connections.at(-1)!.query.get("model")).toBe("nova-3");
    expect(fake.connections.at(-1)!.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
  });
});
