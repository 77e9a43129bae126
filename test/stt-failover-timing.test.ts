import { afterAll, beforeAll, expect, test } from "bun:test";
import { KEPT_AUDIO_SECONDS } from "../src/sessions/stt-kept-audio.ts";
import { ScriptedStt, scriptedSttCatalogue, secondsOfSpeech } from "./fakes/scripted-stt.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, type Client, type Recording } from "./helpers/ws-client.ts";

// A streaming STT session's mid-session failover at forged moments, against in-process recognizers
// that fail on cue (fakes/scripted-stt.ts; each final names the second of the caller's audio it
// heard): right after a final, twice in one session, in the middle of a replay, and after a turn
// longer than the audio kept for a replay.

const IDS = ["s-one", "s-two", "s-three"];
const providers = IDS.map((id) => new ScriptedStt(id));
const [one, two] = providers;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: scriptedSttCatalogue(IDS), providers: [], sttProviders: providers } });
});
afterAll(() => server.stop(0));

function session(key: string): Client {
  return connect(server.wsUrl(`/v1/stt?model=cmu/pocketsphinx-en-us&audio_format=pcm_16000&provider_order=${IDS.join(",")}`), bearer(key));
}

function send(c: Client, pcm: Uint8Array): void {
  for (let at = 0; at < pcm.byteLength; at += 3200) c.ws.send(pcm.subarray(at, at + 3200));
}

const finals = (rec: Recording) => rec.events.filter((e) => e.type === "stt.transcript.final").map((e) => [e.text, e.audio_start_ms, e.audio_end_ms]);
const secondsFinals = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [`second ${from + i}`, (from + i) * 1000, (from + i + 1) * 1000]);
const switches = (rec: Recording) => rec.events.filter((e) => e.type === "stt.provider.switched").map((e) => [e.previous_provider, e.provider, e.audio_ms]);

async function parts(tenantId: string) {
  const record = await lastActivity(server, tenantId);
  const list = JSON.parse(record.parts!) as { provider: string; units: number; credits: number }[];
  expect(list.reduce((sum, p) => sum + p.credits, 0)).toBe(record.credits);
  return { record, units: list.map((p) => [p.provider, p.units]) };
}

/** A session: `seconds` of speech at once, then, once `switched` switches were told, 2 s more and a close; it ends normally. */
async function thenTwoMore(key: string, seconds: number, switched: number): Promise<Recording> {
  const c = session(key);
  await c.opened;
  send(c, secondsOfSpeech(seconds));
  await until(() => switches(c.rec).length === switched);
  send(c, secondsOfSpeech(2, seconds));
  c.send({ type: "stt.session.close" });
  const rec = await c.closed;
  expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
  return rec;
}

test("the provider dies right behind its final: that final is told once, the next provider takes over after it, seq gapless", async () => {
  const { key, tenantId } = await fundedAccount(server);
  one.plan.push({ dieAfterFinal: 2 });
  const c = session(key);
  await c.opened;
  send(c, secondsOfSpeech(5));
  c.send({ type: "stt.session.close" });
  const rec = await c.closed;
  expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
  expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
  expect(switches(rec)).toEqual([["s-one", "s-two", 2000]]);
  expect(finals(rec)).toEqual(secondsFinals(0, 5));
  expect(two.received.at(-1)).toBe(3 * 32000);
  const { record, units } = await parts(tenantId);
  expect(record).toMatchObject({ provider: "s-two", status: "completed", usageAmount: 5 });
  expect(units).toEqual([
    ["s-one", 2],
    ["s-two", 3],
  ]);
});

test("two switches in one session, the second in the middle of a replay: every second's final once, seq gapless, billed once", async () => {
  const { key, tenantId } = await fundedAccount(server);
  one.plan.push({ dieAfterFinal: 1 });
  // The second provider fails half a second into the replay, before it settled anything.
  two.plan.push({ dieAfterBytes: 16000 });
  const rec = await thenTwoMore(key, 4, 2);
  expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
  expect(switches(rec)).toEqual([
    ["s-one", "s-two", 1000],
    ["s-two", "s-three", 1000],
  ]);
  expect(finals(rec)).toEqual(secondsFinals(0, 6));
  expect(rec.events.some((e) => e.type === "stt.error")).toBe(false);
  const { record, units } = await parts(tenantId);
  expect(record).toMatchObject({ provider: "s-three", usageAmount: 6 });
  expect(units).toEqual([
    ["s-one", 1],
    ["s-three", 5],
  ]);
  expect(JSON.parse(record.attempts).map((a: { provider: string }) => a.provider)).toEqual(["s-one", "s-two"]);
});

test("a 60 s turn with no final, then a failure: only the last 30 s are replayed (the rest's words lost, as documented), the session goes on", async () => {
  const { key, tenantId } = await fundedAccount(server);
  one.plan.push({ silent: true, dieAfterBytes: 60 * 32000 });
  const rec = await thenTwoMore(key, 60, 1);
  expect(switches(rec)).toEqual([["s-one", "s-two", (60 - KEPT_AUDIO_SECONDS) * 1000]]);
  // The next provider was given the kept 30 s, no more, then the 2 s that came after.
  expect(two.received.at(-1)).toBe((KEPT_AUDIO_SECONDS + 2) * 32000);
  expect(finals(rec)).toEqual(secondsFinals(60 - KEPT_AUDIO_SECONDS, 62));
  // The failed provider settled nothing: it serves no part, the record is the next one's alone.
  const record = await lastActivity(server, tenantId);
  expect(record).toMatchObject({ provider: "s-two", status: "completed", usageAmount: 62, parts: null });
  expect(JSON.parse(record.attempts).map((a: { provider: string }) => a.provider)).toEqual(["s-one"]);
});
