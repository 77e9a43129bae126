import { expect } from "bun:test";
import { like } from "drizzle-orm";
import type { ConversationEvent } from "../../src/realtime/conversation/conversation-events.ts";
import type { TestServer } from "./server.ts";
import { concat, frames, silence, speak } from "./speech.ts";
import { bearer, type Client, connect } from "./ws-client.ts";

// What the realtime conversation tests share: a profile of the embedded engines answered by an
// application at a URL, the caller speaking in real time, and what the router billed.

/** A conversation's `started` event, as the surfaces' ports take it: 16 kHz PCM in and out, PocketSphinx hearing. */
export const conversationStarted = (sessionId: string, profileId: string): Extract<ConversationEvent, { type: "started" }> => ({
  type: "started",
  sessionId,
  profileId,
  input: { audioFormat: "pcm_16000", sampleRate: 16000 },
  output: { encoding: "pcm_s16le", sampleRate: 16000 },
  stt: { provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us" },
});

/** A `/v1/realtime` profile: PocketSphinx hears, Flite speaks, the application at `upstreamUrl` answers. */
export async function realtimeProfile(on: TestServer, key: string, upstreamUrl: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${on.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({
      name: "test line",
      pipeline: { stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000" } }, tts: { model: "flite", voice: "slt" }, upstream: { url: upstreamUrl }, ...extra },
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** A profile whose application was at a loopback port nothing listens on any more: its id, and that port. */
export async function unreachableAppProfile(on: TestServer, key: string) {
  const closedPort = Bun.serve({ port: 0, fetch: () => new Response("") });
  const port = closedPort.port;
  const url = `ws://127.0.0.1:${port}/app`;
  closedPort.stop(true);
  const res = await fetch(`${on.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({ name: "gone", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url } } }),
  });
  return { id: ((await res.json()) as { id: string }).id, port };
}

/** Waits for `check` to hold, up to `ms`; fails the test if it never does. */
export async function until(check: () => boolean, ms = 10_000) {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await Bun.sleep(10);
  expect(check()).toBe(true);
}

/** A caller on `/v1/realtime` of the profile `profileId` as `key`, once its socket is open. */
export async function callProfile(on: TestServer, profileId: string, key = on.key): Promise<Client> {
  const c = connect(on.wsUrl(`/v1/realtime?profile_id=${profileId}`), bearer(key));
  await c.opened;
  return c;
}

/** The caller asks something whose answer is long, then talks over it once it has played a second: the answer is barged in on, and a second turn ends. */
export async function talkOverAnswer(c: Client) {
  await say(c, concat([silence(300), speak("What are your opening hours?"), silence(900)]));
  await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.started"));
  await Bun.sleep(1000); // the answer plays at the client
  await say(c, concat([speak("Thank you, that is all."), silence(900)]));
  await until(() => c.rec.events.filter((e) => e.type === "realtime.turn.ended").length === 2);
}

/** Streams 20 ms frames in real time. */
export async function say(c: Client, pcm: Int16Array) {
  for (const f of frames(pcm)) {
    c.ws.send(f);
    await Bun.sleep(20);
  }
}

/** The activity records whose ids match `pattern` (a conversation's parts: `<id>.%`), once `count` have settled. */
export async function recordsOf(on: TestServer, pattern: string, count = 1) {
  const { db, schema } = on.ctx.database;
  let rows: (typeof schema.activity.$inferSelect)[] = [];
  for (let i = 0; i < 50 && rows.length < count; i++, await Bun.sleep(20)) rows = await db.select().from(schema.activity).where(like(schema.activity.id, pattern));
  return rows;
}

/** The words PocketSphinx hears in 16 kHz PCM, through /v1/stt. */
export async function transcribe(on: TestServer, pcm: Uint8Array): Promise<string> {
  const c = connect(on.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000&commit_strategy=manual&interim_results=false"), bearer(on.key));
  await c.opened;
  for (let at = 0; at < pcm.byteLength; at += 3200) c.ws.send(pcm.subarray(at, at + 3200));
  c.send({ type: "stt.audio.commit" });
  c.send({ type: "stt.session.close" });
  const rec = await c.closed;
  return rec.events
    .filter((e) => e.type === "stt.transcript.final")
    .map((e) => e.text)
    .join(" ");
}
