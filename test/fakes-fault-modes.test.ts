import { afterAll, describe, expect, test } from "bun:test";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram } from "./fakes/deepgram.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";

// The faults a fake keeps until healed (fakes/fault-modes.ts), on the wire: refuse, hang, answer
// 500 in the provider's own body, then healed on the same port.

const openai = startFakeOpenAi();
const deepgram = startFakeDeepgram();
afterAll(() => {
  openai.stop();
  deepgram.stop();
});

const speech = (signal?: AbortSignal) =>
  fetch(`${openai.url}/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${FAKE_OPENAI_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "tts-1", input: "Hi", voice: "alloy", response_format: "pcm" }),
    signal,
  });

/** How a Deepgram listen socket's opening ends: `open`, or the error or close before it. */
function listen(): Promise<string> {
  const ws = new WebSocket(`${deepgram.ws}/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000`, { headers: { authorization: `Token ${FAKE_DEEPGRAM_KEY}` } } as any);
  return new Promise((resolve) => {
    ws.onopen = () => {
      ws.close();
      resolve("open");
    };
    ws.onerror = () => resolve("error");
  });
}

describe("fault modes kept until healed", () => {
  test("status500: every request answered 500 in the provider's error body, until healed", async () => {
    await openai.faults.set({ kind: "status500" });
    for (let i = 0; i < 2; i++) {
      const res = await speech();
      expect([res.status, ((await res.json()) as any).error.type]).toEqual([500, "server_error"]);
    }
    await deepgram.faults.set({ kind: "status500" });
    expect(await listen()).toBe("error");
    await openai.faults.set(undefined);
    await deepgram.faults.set(undefined);
    expect((await speech()).status).toBe(200);
    expect(await listen()).toBe("open");
  });

  test("hang: the request is taken (counted) and never answered, until its client gives up", async () => {
    await openai.faults.set({ kind: "hang" });
    const before = openai.faults.arrivals;
    const abort = new AbortController();
    const hanging = speech(abort.signal).catch((err: Error) => err.name);
    while (openai.faults.arrivals === before) await Bun.sleep(5);
    abort.abort();
    expect(await hanging).toBe("AbortError");
    await openai.faults.set(undefined);
    expect((await speech()).status).toBe(200);
  });

  test("refuse: connections are closed at once and counted; healed, the same port serves again", async () => {
    await openai.faults.set({ kind: "refuse" });
    await deepgram.faults.set({ kind: "refuse" });
    const before = [openai.faults.arrivals, deepgram.faults.arrivals];
    expect(
      await speech().then(
        () => "answered",
        () => "failed",
      ),
    ).toBe("failed");
    expect(await listen()).toBe("error");
    expect(openai.faults.arrivals).toBeGreaterThan(before[0]);
    expect(deepgram.faults.arrivals).toBeGreaterThan(before[1]);
    await openai.faults.set(undefined);
    await deepgram.faults.set(undefined);
    expect((await speech()).status).toBe(200);
    expect(await listen()).toBe("open");
  });
});
