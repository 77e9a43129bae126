import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { callProfile, realtimeProfile, say, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak } from "./helpers/speech.ts";

// A realtime conversation's speech goes through the TTS cache too: the application giving the same
// answer twice has it synthesized once (Flite's utterances counted by the cache's metrics).

const app = startFakeApp();
let server: TestServer;
beforeAll(async () => void (server = await startTestServer({ TTS_CACHE_BYTES: String(64 * 1024 * 1024) })));
afterAll(async () => {
  await server.stop(0);
  app.stop();
});

const count = async (metric: "ttsCacheHits" | "ttsCacheMisses") => (await server.ctx.metrics[metric].get()).values.find((v) => v.labels.provider === "flite")?.value ?? 0;

test("the same answer in two turns is synthesized once and played from the cache the second time", async () => {
  const { key } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url("/echo"));
  const c = await callProfile(server, profileId, key);
  const answered = () => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length;
  await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
  await until(() => answered() === 1);
  const [hits, misses] = [await count("ttsCacheHits"), await count("ttsCacheMisses")];
  expect(misses).toBeGreaterThan(0);
  await say(c, concat([speak("Thank you very much for your help."), silence(900)]));
  await until(() => answered() === 2);
  c.send({ type: "realtime.session.close" });
  expect((await c.closed).close.code).toBe(1000);
  expect(await count("ttsCacheMisses")).toBe(misses);
  expect(await count("ttsCacheHits")).toBeGreaterThan(hits);
});

test("a profile with pipeline.tts.cache false is neither played from nor kept in the cache; any other value is 400", async () => {
  const { key } = await fundedAccount(server);
  const bad = await fetch(`${server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "x", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt", cache: "no" }, upstream: { url: app.url("/echo") } } }),
  });
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ error: "invalid_request", param: "pipeline.tts.cache" });
  const profileId = await realtimeProfile(server, key, app.url("/echo"), { tts: { model: "flite", voice: "slt", cache: false } });
  const c = await callProfile(server, profileId, key);
  const [hits, misses] = [await count("ttsCacheHits"), await count("ttsCacheMisses")];
  await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
  await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
  c.send({ type: "realtime.session.close" });
  expect((await c.closed).close.code).toBe(1000);
  expect([await count("ttsCacheHits"), await count("ttsCacheMisses")]).toEqual([hits, misses]);
});
