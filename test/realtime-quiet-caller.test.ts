import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { startFakeCartesia } from "./fakes/cartesia.ts";
import { startFakeDeepgram } from "./fakes/deepgram.ts";
import { startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { cartesiaAt, deepgramAt, elevenLabsAt, openAiAt } from "./fakes/server-env.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { callProfile, realtimeProfile, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak, spokenSpans, to24k } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A listen-only stretch of a call: the caller says nothing (muted, or only the application talks)
// for longer than the cloud recognizer keeps a socket that carries nothing. Each fake drops such a
// socket after IDLE_MS, as its provider does (Deepgram after 10 s; the others' limits are not
// documented); the router keeps each one alive, and the caller's next turn is still heard.

const IDLE_MS = 1000;
const el = startFakeElevenLabs();
const cartesia = startFakeCartesia();
const openAi = startFakeOpenAi();
const deepgram = startFakeDeepgram();
const app = startFakeApp();
let server: TestServer;

beforeAll(async () => {
  el.closeIdleScribe(IDLE_MS);
  cartesia.closeIdleStt(IDLE_MS);
  openAi.closeIdleRealtime(IDLE_MS);
  deepgram.closeIdleStreams(IDLE_MS);
  server = await startTestServer({ ...elevenLabsAt(el), ...cartesiaAt(cartesia), ...openAiAt(openAi), ...deepgramAt(deepgram), UPSTREAM_KEEPALIVE_MS: String(IDLE_MS / 4) });
});
afterAll(async () => {
  await server.stop(0);
  for (const fake of [el, cartesia, openAi, deepgram, app]) fake.stop();
});

const PIECES = [silence(300), speak("Thank you very much for your help."), silence(1500)];
const SAID = concat(PIECES);
const SAID_MS = (SAID.length / 16000) * 1000;
const SPOKEN_FROM_MS = spokenSpans(PIECES)[0]![0];
/** The caller's audio at the rate of `format`. */
const saidAt = (format: string) => (format === "pcm_24000" ? new Int16Array(new Uint8Array(to24k(SAID)).buffer) : SAID);
const MODELS = [
  ["scribe_v2_realtime", "pcm_16000", () => el.openSockets()],
  ["ink-whisper", "pcm_16000", () => cartesia.openSockets()],
  ["gpt-4o-transcribe", "pcm_24000", () => openAi.openSockets()],
  ["flux-general-en", "pcm_16000", () => deepgram.openSockets()],
] as const;

describe("a realtime conversation whose caller stays silent longer than the recognizer keeps an idle socket", () => {
  for (const [model, format, openSockets] of MODELS) {
    test(`${model}: the recognizer's socket is kept alive, and the caller's next turn is heard and answered`, async () => {
      const { key } = await fundedAccount(server);
      const profileId = await realtimeProfile(server, key, app.url("/echo"), { stt: { model, input: { audio_format: format } } });
      const c = await callProfile(server, profileId, key);
      await until(() => c.rec.events.some((e) => e.type === "realtime.session.started"));
      await until(() => openSockets() === 1); // this call's recognizer, the last test's gone

      await Bun.sleep(3 * IDLE_MS); // the caller sends nothing
      expect(openSockets()).toBe(1);
      expect(c.rec.events.filter((e) => e.type === "realtime.error")).toEqual([]);

      for (const frame of frames(saidAt(format), format === "pcm_24000" ? 24000 : 16000)) {
        c.ws.send(frame);
        await Bun.sleep(20);
      }
      await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"), 20_000);
      c.send({ type: "realtime.session.close" });
      const rec = await c.closed;
      expect(rec.close).toEqual({ code: 1000, reason: "conversation_complete" });
      const final = rec.events.find((e) => e.type === "realtime.transcript.final");
      expect(String(final?.text).toLowerCase()).toContain("thank you");
    }, 40_000);
  }
});

describe("/v1/stt after a silent stretch kept alive", () => {
  for (const [model, format, openSockets] of MODELS) {
    test(`${model}: the times told stay on the client's audio clock (the keep-alive's silence is the upstream's alone)`, async () => {
      const c = connect(server.wsUrl(`/v1/stt?model=${model}&audio_format=${format}`), bearer(server.key));
      await c.opened;
      await until(() => openSockets() === 1);
      await Bun.sleep(3 * IDLE_MS); // the client sends nothing
      expect(openSockets()).toBe(1);
      for (const frame of frames(saidAt(format), format === "pcm_24000" ? 24000 : 16000)) c.ws.send(frame);
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      const finals = rec.events.filter((e) => e.type === "stt.transcript.final");
      expect(finals.length).toBeGreaterThan(0);
      expect(finals[0]!.audio_start_ms).toBeLessThanOrEqual(SPOKEN_FROM_MS + 100);
      for (const e of rec.events.filter((e) => e.type.startsWith("stt.transcript."))) expect(e.audio_end_ms).toBeLessThanOrEqual(SAID_MS);
      for (const e of rec.events.filter((e) => e.type === "stt.signal" && e.origin === "provider")) expect(e.audio_ms).toBeLessThanOrEqual(SAID_MS);
    }, 30_000);
  }
});
