import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { like } from "drizzle-orm";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak } from "./helpers/speech.ts";
import { bearer, type Client, connect } from "./helpers/ws-client.ts";

// /v1/realtime end to end on the embedded engines: the caller's voice made by Flite, heard by
// PocketSphinx with the router VAD's turns, answered by the ConversationRelay fake, spoken back by
// Flite; the answer's audio recognized again to prove it is speech that says the answer.

let server: TestServer;
const app = startFakeApp();
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop(0);
  app.stop();
});

async function createProfile(key: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({
      name: "test line",
      pipeline: { stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000" } }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url(path) }, ...extra },
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function until(check: () => boolean, ms = 10_000) {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await Bun.sleep(10);
  expect(check()).toBe(true);
}

/** Streams 20 ms frames in real time. */
async function say(c: Client, pcm: Int16Array) {
  for (const f of frames(pcm)) {
    c.ws.send(f);
    await Bun.sleep(20);
  }
}

/** The words PocketSphinx hears in 16 kHz PCM, through /v1/stt. */
async function transcribe(pcm: Uint8Array): Promise<string> {
  const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000&commit_strategy=manual&interim_results=false"), bearer(server.key));
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

describe.skipIf(!localSttAvailable)("/v1/realtime on the embedded engines", () => {
  test("a caller's turn goes to the application as a prompt; its answer comes back as speech that says it; usage billed per part", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const profileId = await createProfile(key, "/echo");
    const c = connect(server.wsUrl(`/v1/realtime?profile_id=${profileId}`), bearer(key));
    await c.opened;
    // Audio sent before anything is connected is kept.
    await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "conversation_complete" });

    const ev = rec.events;
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(ev[0]).toMatchObject({
      type: "realtime.session.started",
      profile_id: profileId,
      input_audio_format: "pcm_16000",
      output_audio_format: "pcm_16000",
      stt: { provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us" },
    });
    const sessionId = ev[0]!.session_id as string;
    expect(ev.some((e) => e.type === "realtime.input_audio.speech_started" && e.turn_id === "turn_1")).toBe(true);
    expect(ev.some((e) => e.type === "realtime.transcript.interim")).toBe(true);
    expect(ev.find((e) => e.type === "realtime.transcript.final")).toMatchObject({ turn_id: "turn_1", text: "thank you very much for your help" });
    expect(ev.find((e) => e.type === "realtime.turn.ended")).toMatchObject({ turn_id: "turn_1", text: "thank you very much for your help" });

    // The application got setup, then the finished prompt.
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    expect(appConn.received[0]).toMatchObject({ type: "setup", sessionId, profileId });
    expect(appConn.received[1]).toEqual({ type: "prompt", voicePrompt: "thank you very much for your help", last: true });

    const answer = "You said: thank you very much for your help";
    const tokens = ev.filter((e) => e.type === "realtime.response.text");
    expect(tokens.map((t) => t.token).join("")).toBe(answer);
    expect(tokens.every((t) => t.response_id === "resp_1")).toBe(true);
    expect(tokens.at(-1)!.last).toBe(true);
    const started = ev.findIndex((e) => e.type === "realtime.response.audio.started");
    expect(ev[started]).toMatchObject({ response_id: "resp_1", provider: "flite" });
    const done = ev.find((e) => e.type === "realtime.response.audio.done")!;
    expect(done).toMatchObject({ response_id: "resp_1", characters: answer.length });

    // The audio: binary frames between audio started and done, 16 kHz speech that says the answer.
    const audio = Buffer.concat(rec.audio);
    expect(done.audio_ms).toBe(Math.round((audio.byteLength / 32000) * 1000));
    expect(audio.byteLength).toBeGreaterThan(32000);
    const heard = await transcribe(audio);
    for (const word of ["thank", "very", "much", "help"]) expect(heard).toContain(word);

    const ended = ev.at(-1)!;
    expect(ended).toMatchObject({ type: "realtime.session.ended", session_id: sessionId, reason: "client_closed", usage: { tts_characters: answer.length } });
    expect(ended.usage.stt_seconds).toBeGreaterThanOrEqual(3);

    // One activity record per part, each under the conversation's id.
    const { db, schema } = server.ctx.database;
    await until(() => true);
    let rows: (typeof schema.activity.$inferSelect)[] = [];
    for (let i = 0; i < 50 && rows.length < 2; i++, await Bun.sleep(20))
      rows = await db
        .select()
        .from(schema.activity)
        .where(like(schema.activity.id, `${sessionId}.%`));
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[`${sessionId}.stt`]).toMatchObject({ tenantId, capability: "stt", provider: "pocketsphinx", usageUnit: "seconds", usageAmount: ended.usage.stt_seconds, status: "completed" });
    expect(byId[`${sessionId}.resp_1`]).toMatchObject({ tenantId, capability: "tts", provider: "flite", usageUnit: "characters", usageAmount: answer.length, status: "completed" });
    // No socket left open at the application.
    await until(() => appConn.closed !== undefined);
  }, 30_000);
});
