import { describe, expect, test } from "bun:test";
import { CartesiaTts } from "../../src/providers/cartesia/tts.ts";
import { ElevenLabsTts } from "../../src/providers/elevenlabs/tts.ts";
import type { TtsProvider } from "../../src/providers/types.ts";
import { openUpstreamStreams } from "../../src/providers/upstream-ws.ts";
import { FAKE_CARTESIA_KEY } from "../fakes/cartesia.ts";
import { FAKE_ELEVENLABS_KEY } from "../fakes/elevenlabs.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "../fakes/fixed-pcm-provider.ts";
import { cartesiaAt, elevenLabsAt } from "../fakes/server-env.ts";
import { cutDroppedConnections, type StreamFault } from "../fakes/http-fake.ts";
import { fundedAccount, lastActivity } from "./accounts.ts";
import { startTestServer, type TestServer } from "./server.ts";
import { bearer, type Client, connect } from "./ws-client.ts";

// What the tests of every HTTP TTS adapter share: a server where the adapter also serves the test
// model (as `echoId`) beside a `fixed` fallback, a one-sentence session, and the fault suite.

/**
 * The bounds on the upstream for the adapters these tests build (the configured ones take the idle
 * bound; their connect bound is the default 5 s). The fakes make their Flite speech, and the
 * streaming STT fakes find speech in the audio, synchronously, on the event loop the router shares
 * with them: on a loaded machine one such step holds it for a second or more, and a tighter bound
 * gives up on a fake that was about to answer (the session then falls back, or fails with "went
 * silent"). Each `stall` fault waits one of them out. The provider tests of OpenAI and Deepgram
 * Flux use them too.
 */
export const UPSTREAM_TIMEOUTS = { connectTimeoutMs: 3000, idleTimeoutMs: 3000 };

/** A test server with the cloud adapter configured by `env`, and `echo` (the same adapter under another id) serving TEST_MODEL as `bindingId`. */
export function startEchoServer(env: Record<string, string>, echo: TtsProvider, bindingId = "echo"): Promise<TestServer> {
  const catalogue = testCatalogue([echo.id, "fixed"]);
  catalogue.providers[0].requiresVoice = true;
  catalogue.providers[0].bindings[0].id = bindingId;
  return startTestServer({ ...env, UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) }, { extra: { catalogue, providers: [echo, new FixedPcmProvider("fixed", 3)] } });
}

/** One sentence through /v1/tts, then close; the client, to follow the session as it goes. */
export function startSpeaking(server: TestServer, query: string, text: string, key = server.key): Client {
  const c = connect(server.wsUrl(`/v1/tts?${query}`), bearer(key));
  c.send({ type: "text", text });
  c.send({ type: "close" });
  return c;
}

/** A cloud adapter's options for talking to its fake, with the tests' upstream bounds. */
export const fakeUpstreamOptions = (apiKey: string, baseUrl: string) => ({ apiKey, baseUrl, ...UPSTREAM_TIMEOUTS });

/** The server with ElevenLabs pointed at `fake`, the same adapter serving the test model as "el-echo" so faults can meet a fallback. */
export function startElevenLabsEchoServer(fake: { url: string }): Promise<TestServer> {
  const echo = Object.assign(new ElevenLabsTts(fakeUpstreamOptions(FAKE_ELEVENLABS_KEY, fake.url)), { id: "el-echo" });
  return startEchoServer(elevenLabsAt(fake), echo);
}

/** The server with Cartesia pointed at `fake`, the same adapter serving the test model as "car-echo" so faults can meet a fallback. */
export function startCartesiaEchoServer(fake: { url: string }): Promise<TestServer> {
  const echo = Object.assign(new CartesiaTts(fakeUpstreamOptions(FAKE_CARTESIA_KEY, fake.url)), { id: "car-echo" });
  return startEchoServer(cartesiaAt(fake), echo);
}

/** One sentence through /v1/tts, then close; the recorded session. */
export function speakOnce(server: TestServer, query: string, text: string, key = server.key) {
  return startSpeaking(server, query, text, key).closed;
}

export interface HttpTtsFaultTarget {
  server: () => TestServer;
  fake: { fault(f: "401" | "429" | "500" | StreamFault): void; openRequests(): number };
  /** The adapter under test registered under this id, serving TEST_MODEL beside a `fixed` fallback. */
  echoId: string;
  voice: string;
  /** More query for every session (e.g. `transport=http` for an adapter whose default is a WebSocket). */
  query?: string;
}

/**
 * The faults every HTTP TTS adapter must survive, each with and without a fallback: the close
 * code, what is billed, and that no upstream request outlives the session.
 */
export function describeHttpTtsFaults(name: string, { server, fake, echoId, voice, query: extra }: HttpTtsFaultTarget): void {
  async function run(fault: "401" | "429" | "500" | StreamFault, query: string) {
    const { key, tenantId } = await fundedAccount(server());
    fake.fault(fault);
    const session = startSpeaking(server(), `model=${TEST_MODEL}&voice=${voice}&${query}${extra ? `&${extra}` : ""}`, "Twelve chars", key);
    if (fault === "drop") {
      // The fake cuts the connection once the client has heard its audio (or the session ended without).
      while (session.rec.audio.length === 0 && session.rec.close.code === 0) await Bun.sleep(5);
      cutDroppedConnections();
    }
    const rec = await session.closed;
    for (let i = 0; i < 50 && (fake.openRequests() > 0 || openUpstreamStreams() > 0); i++) await Bun.sleep(20);
    expect(fake.openRequests()).toBe(0);
    expect(openUpstreamStreams()).toBe(0); // WebSocket transports: no stream, and so no timer, outlives the session
    return { rec, record: await lastActivity(server(), tenantId) };
  }

  describe(`${name} faults`, () => {
    for (const fault of ["401", "429", "500", "stall", "malformed"] as const) {
      test(`${fault} before any audio: the next candidate serves, billed once at its rate`, async () => {
        const { rec, record } = await run(fault, `provider_order=${echoId},fixed`);
        expect(rec.close.code).toBe(1000);
        expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: 12, credits: 120 });
        expect(JSON.parse(record.attempts)[0].provider).toBe(echoId);
      });

      test(`${fault} with allow_fallbacks=false: 1011 upstream_error, nothing billed`, async () => {
        const { rec, record } = await run(fault, `provider=${echoId}&allow_fallbacks=false`);
        expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
        expect(record).toMatchObject({ status: "failed", credits: 0 });
      });
    }

    test("a connection dropped after audio started: the sentence cut off is heard again from the fallback, 1000, billed once at its rate", async () => {
      const { rec, record } = await run("drop", `provider_order=${echoId},fixed`);
      expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
      expect(rec.audio.length).toBeGreaterThan(0);
      expect(record).toMatchObject({ provider: "fixed", status: "completed", usageAmount: 12, credits: 120, parts: null });
    });

    test("a connection dropped after audio started with allow_fallbacks=false: 1011, nothing billed", async () => {
      const { rec, record } = await run("drop", `provider=${echoId}&allow_fallbacks=false`);
      expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
      expect(rec.audio.length).toBeGreaterThan(0);
      expect(record).toMatchObject({ provider: echoId, status: "failed", credits: 0 });
    });
  });
}
