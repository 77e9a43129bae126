import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { PICO_DIR } from "./helpers/pico.ts";
import { EnginePool } from "../src/pools/engine-pool.ts";

// An embedded engine whose worker has a long queue of utterances is busy, not down: a session
// opened on it then is accepted and its audio comes in its turn (docs/routing.md, "Embedded
// engines"). The connect timeout here is 1 ms, shorter than any worker's answer: only the network
// providers are held to it.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ PROVIDER_CONNECT_TIMEOUT_MS: "1", TTS_WORKERS: "1", PROVIDER_FAILURE_THRESHOLD: "3" });
});
const pool = new EnginePool(1, { picoVoicesDir: PICO_DIR, picoVoicesUrl: "" });
afterAll(() => Promise.all([server.stop(0), pool.close()]));

const SESSIONS = 24;
const TEXT = "Every caller waits its turn. The engine speaks each sentence in order. Nobody is dropped.";

async function fliteHealth(): Promise<Record<string, unknown>> {
  const { providers } = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, { tts: { id: string; health: Record<string, unknown> }[] }> };
  return providers.flite.tts.find((m) => m.id === "flite")!.health;
}

describe("an embedded engine with a long queue", () => {
  test(`${SESSIONS} sessions opened on Flite at once are all accepted and all complete with audio; its health stays up`, async () => {
    const clients = Array.from({ length: SESSIONS }, () => {
      const c = connect(server.wsUrl("/v1/tts?model=flite&voice=slt&format=mp3"), bearer(server.key));
      c.send({ type: "text", text: TEXT });
      c.send({ type: "close" });
      return c;
    });
    const recs = await Promise.all(clients.map((c) => c.closed));

    expect(recs.map((r) => r.close)).toEqual(recs.map(() => ({ code: 1000, reason: "tts_complete" })));
    expect(recs.flatMap((r) => r.events.filter((e) => e.type === "service.tts_provider_status"))).toEqual([]);
    for (const rec of [recs[0], recs.at(-1)!]) {
      const probed = await ffprobe(Buffer.concat(rec.audio), "mp3");
      expect(probed.codec).toBe("mp3");
      expect(probed.seconds).toBeGreaterThan(3);
    }
    expect(recs.every((r) => r.audio.length > 0)).toBe(true);
    expect(await fliteHealth()).toMatchObject({ status: "up" });
  }, 120_000); // 24 sessions' turns on one worker: under the parallel suite's load this took over 30 s
});

describe("the engine worker's turns", () => {
  test("a session opened behind another's many utterances is opened at once, and its utterance comes in the next round", async () => {
    const order: string[] = [];
    const { promise: warm, resolve: warmed } = Promise.withResolvers<void>();
    const first = pool.open("flite", "slt", "pcm", (msg) => (msg.ev === "said" ? warmed() : undefined));
    first.say("Warm.");
    await warm; // the engine is loaded
    first.drop();
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const busy = pool.open("flite", "slt", "pcm", (msg) => {
      if (msg.ev === "said") order.push("busy said");
      if (msg.ev === "ended") resolve();
    });
    for (let i = 0; i < 8; i++) busy.say(TEXT);
    busy.end();
    await Bun.sleep(0);
    const { promise: lateDone, resolve: lateSaid } = Promise.withResolvers<void>();
    const late = pool.open("flite", "slt", "pcm", (msg) => {
      if (msg.ev === "opened") {
        order.push("late opened");
        late.say("Me too.");
      }
      if (msg.ev === "said") {
        order.push("late said");
        lateSaid();
      }
    });
    await Promise.all([done, lateDone]);
    late.drop();
    // Before: the late session was opened only once all eight were spoken, and said after them.
    expect(order.indexOf("late opened")).toBeLessThan(order.lastIndexOf("busy said"));
    expect(order.indexOf("late said")).toBeLessThan(order.lastIndexOf("busy said"));
    expect(order.filter((o) => o === "busy said")).toHaveLength(8);
  });
});

describe("the engine worker's lanes", () => {
  test("an interactive session opened behind many bulk sessions' utterances is spoken before their round ends, and bulk keeps its turns", async () => {
    const BULK = 10;
    const order: string[] = [];
    const sessions: { drop(): void }[] = [];
    const ended = (name: string, lane: "interactive" | "bulk", sentences: number) => {
      const { promise, resolve } = Promise.withResolvers<void>();
      const session = pool.open(
        "flite",
        "slt",
        "pcm",
        (msg) => {
          if (msg.ev === "said") order.push(name);
          if (msg.ev === "ended") resolve();
        },
        { lane },
      );
      for (let i = 0; i < sentences; i++) session.say(`Sentence ${i + 1} of ${name}.`);
      session.end();
      sessions.push(session);
      return promise;
    };
    const bulk = Array.from({ length: BULK }, (_, i) => ended(`bulk ${i}`, "bulk", 2));
    const live = ended("live", "interactive", 10);
    await Promise.all([...bulk, live]);
    for (const s of sessions) s.drop();

    const bulkBefore = order.indexOf("live");
    // Before the lanes: the live session's first sentence waited for every bulk session's first (10).
    expect(bulkBefore).toBeLessThan(3);
    // Bulk is not starved: bulk sentences are spoken while the live session still has sentences waiting.
    const whileLive = order.slice(bulkBefore, order.lastIndexOf("live")).filter((o) => o !== "live");
    expect(whileLive.length).toBeGreaterThan(0);
    expect(order.filter((o) => o === "live")).toHaveLength(10);
    expect(order.filter((o) => o !== "live")).toHaveLength(2 * BULK);
  });
});
