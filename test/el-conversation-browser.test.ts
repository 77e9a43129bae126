import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { wavHeader } from "../src/audio/wav.ts";
import type { Recorded } from "./browser/el-conversation-page.ts";
import { type FakeApp, LONG_ANSWER, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { startSpeechEngineApp, wordByWord } from "./helpers/speech-engine-app.ts";
import { concat, silence, speak } from "./helpers/speech.ts";

// /el/v1/convai/conversation driven by ElevenLabs' official browser SDK (@elevenlabs/client) in
// headless Chromium: its microphone is a WAV of real speech (Chromium's fake capture device), its
// player is the SDK's own (AudioWorklet into an AudioContext). Debian's chromium (installed by
// .ci/run, required there with REQUIRE_CHROMIUM=1); playwright-core only drives it.

const CHROMIUM = "/usr/bin/chromium";
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable) {
  if (process.env.REQUIRE_CHROMIUM === "1") throw new Error(`Chromium is required (REQUIRE_CHROMIUM=1) but ${CHROMIUM} is missing`);
  console.warn(`skipping the browser SDK tests: no ${CHROMIUM}`);
}

/**
 * What the fake microphone says, from the start of each capture (each conversation opens its own):
 * a question, then, 7 s later, words that talk over the long answer (an echo answer is over by then).
 * Chromium loops the file; the silence after it outlasts every test.
 */
const CALLER = () => concat([silence(3000), speak("Thank you very much for your help."), silence(7000), speak("Thank you, that is all."), silence(40_000)]);

let server: TestServer;
let site: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;
let page: Page;
let dir: string | undefined;
let app: FakeApp;
const pageConsole: string[] = [];

/** An engine whose application is the ConversationRelay fake at `path`, or the one `speechEngine` names. */
async function engine(key: string, path: string, speechEngine: Record<string, unknown> = { ws_url: app.url(path), protocol: "conversation_relay" }): Promise<string> {
  const res = await fetch(`${server.url}/el/v1/speech-engine`, {
    method: "POST",
    headers: { "xi-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "support", speech_engine: speechEngine, service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", voice_id: "slt" } } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { speech_engine_id: string }).speech_engine_id;
}

async function signedUrl(key: string, agentId: string): Promise<string> {
  const res = await fetch(`${server.url}/el/v1/convai/conversation/get-signed-url?agent_id=${agentId}`, { headers: { "xi-api-key": key } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { signed_url: string }).signed_url;
}

/** Conversation.startSession in the page; its index in `window.conversations`. */
const converse = (url: string, firstMessage: string) => page.evaluate(([u, f]) => (globalThis as any).converse(u, f) as number, [url, firstMessage] as const);
const recorded = (i: number) => page.evaluate((n) => (globalThis as any).conversations[n] as Recorded, i);
const end = (i: number) => page.evaluate((n) => (globalThis as any).end(n) as Promise<void>, i);

/** Waits (generously) until the conversation's record satisfies `check`; on timeout says what it holds. */
async function until(i: number, check: (r: Recorded) => boolean, ms = 40_000): Promise<Recorded> {
  for (const deadline = Date.now() + ms; ; await Bun.sleep(50)) {
    const r = await recorded(i);
    if (check(r)) return r;
    if (Date.now() > deadline) throw new Error(`gave up waiting; the page holds ${JSON.stringify({ ...r, chunkBytes: r.chunkBytes.length })}; its console: ${pageConsole.join(" | ")}`);
  }
}

/** Audio of the answer came before its interruption and none after, only the next answer's; no error. */
function interruptedAnswer(r: Recorded, answer: number, next: number) {
  const at = r.incoming.indexOf(`interruption ${answer}`);
  expect(r.incoming.slice(0, at)).toContain(`audio ${answer}`);
  expect(r.incoming.slice(at + 1)).not.toContain(`audio ${answer}`);
  expect(r.incoming.slice(at + 1)).toContain(`audio ${next}`);
  expect(r.errors).toEqual([]);
}

describe.skipIf(!localSttAvailable || !chromiumAvailable)("/el/v1/convai/conversation with ElevenLabs' browser SDK in Chromium", () => {
  beforeAll(async () => {
    app = startFakeApp();
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "voxroute-browser-"));
    const pcm = CALLER();
    const wav = join(dir, "caller.wav");
    writeFileSync(wav, Buffer.concat([wavHeader(16000, 1, pcm.byteLength), new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
    const built = await Bun.build({ entrypoints: [new URL("./browser/el-conversation-page.ts", import.meta.url).pathname], target: "browser" });
    if (!built.success) throw new AggregateError(built.logs, "the page script did not build");
    const script = await built.outputs[0]!.text();
    // http://127.0.0.1 is a secure context: getUserMedia and AudioWorklet are allowed.
    site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new URL(req.url).pathname === "/page.js"
          ? new Response(script, { headers: { "content-type": "text/javascript" } })
          : new Response('<!doctype html><html><body><script type="module" src="/page.js"></script></body></html>', { headers: { "content-type": "text/html" } }),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", `--use-file-for-fake-audio-capture=${wav}`, "--autoplay-policy=no-user-gesture-required"],
    });
    page = await browser.newPage();
    page.on("console", (m) => void pageConsole.push(`${m.type()}: ${m.text()}`));
    page.on("pageerror", (e) => void pageConsole.push(`pageerror: ${e.message}`));
    await page.goto(site.url.href);
    await page.waitForFunction(() => typeof (globalThis as any).converse === "function");
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    site?.stop(true);
    // Every conversation's sessions end once the SDK has closed its socket.
    for (let i = 0; i < 100 && server?.ctx.sessions.size; i++) await Bun.sleep(20);
    expect(server?.ctx.sessions.size ?? 0).toBe(0);
    await server?.stop(0);
    app?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a signed URL: the first message; the microphone's words transcribed; the answer as text and played by the SDK's player; pongs; the URL then refused", async () => {
    const { key } = await fundedAccount(server);
    const url = await signedUrl(key, await engine(key, "/echo"));
    const i = await converse(url, "Hello.");
    // The answer's audio came and the SDK's player has run dry ("listening"); a ping was answered.
    const r = await until(i, (r) => r.messages.length >= 3 && r.audioBytes[2] > 32_000 && r.modes.at(-1) === "listening" && r.pongs > 0);
    await end(i);
    expect((await until(i, (r) => r.disconnected !== undefined)).disconnected).toEqual({ reason: "user" });

    expect(r.connected).toStartWith("conv_");
    expect(r.formats).toEqual({ input: { format: "pcm", sampleRate: 16000 }, output: { format: "pcm", sampleRate: 16000 } });
    expect(r.messages.slice(0, 3)).toEqual([
      { source: "ai", message: "Hello.", event_id: 1 },
      { source: "user", message: "thank you very much for your help", event_id: undefined },
      { source: "ai", message: "You said: thank you very much for your help", event_id: 2 },
    ]);
    // The SDK sent the microphone as 16-bit PCM (whole samples), and plenty of it.
    expect(r.chunkBytes.every((n) => n > 0 && n % 2 === 0)).toBe(true);
    expect(r.chunkBytes.reduce((a, b) => a + b, 0)).toBeGreaterThan(5 * 32_000);
    // Each answer came as audio (the answer over a second of it), and the SDK's player made both
    // heard: its output analyser measured sound while it said "speaking".
    expect(r.audioBytes[1]).toBeGreaterThan(8_000);
    expect(r.modes[0]).toBe("speaking");
    expect(r.outputPeaks[1]).toBeGreaterThan(0.05);
    expect(r.outputPeaks[2]).toBeGreaterThan(0.05);
    expect(r.interruptions).toEqual([]);
    expect(r.errors).toEqual([]);

    // The signature was spent: the SDK's second start with it fails on the 4401 close.
    const again = await until(await converse(url, "Hello."), (r) => r.failed !== undefined || r.connected !== undefined);
    expect(again.connected).toBeUndefined();
    expect(again.failed).toEqual({ name: "SessionConnectionError", message: '{"error":"invalid_client_secret"}', closeCode: 4401, closeReason: '{"error":"invalid_client_secret"}' });
  }, 60_000);

  test("barge-in: the microphone talks over the long answer; the SDK gets the interruption and the correction, no more of that answer's audio, and plays the next answer", async () => {
    const { key } = await fundedAccount(server);
    const i = await converse(await signedUrl(key, await engine(key, "/long")), "Hello.");
    // The words that interrupted are a turn of their own: the next answer is heard after them.
    const r = await until(i, (r) => r.interruptions.length > 0 && r.outputPeaks[3] > 0.05);
    await end(i);
    await until(i, (r) => r.disconnected !== undefined);

    expect(r.messages.slice(0, 3)).toEqual([
      { source: "ai", message: "Hello.", event_id: 1 },
      { source: "user", message: "thank you very much for your help", event_id: undefined },
      { source: "ai", message: LONG_ANSWER, event_id: 2 },
    ]);
    expect(r.interruptions).toEqual([2]);
    expect(r.corrections.length).toBe(1);
    expect(r.corrections[0]!.original_agent_response).toBe(LONG_ANSWER);
    expect(r.corrections[0]!.event_id).toBe(2);
    const heard = r.corrections[0]!.corrected_agent_response;
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.length).toBeLessThan(LONG_ANSWER.length);
    expect(LONG_ANSWER.startsWith(heard)).toBe(true);
    expect(r.messages[3]!.source).toBe("user");
    expect(r.messages[4]).toEqual({ source: "ai", message: LONG_ANSWER, event_id: 3 });
    // The answer was being played when the caller talked over it; after the interruption none of
    // its audio came, only the next answer's, which the SDK's player made heard.
    expect(r.outputPeaks[2]).toBeGreaterThan(0.05);
    interruptedAnswer(r, 2, 3);
  }, 60_000);
  test("an ElevenLabs Speech Engine app (the SDK's SpeechEngineServer, authentication on): init, then the conversation so far with the microphone's words; its streamed answer heard", async () => {
    const { key } = await fundedAccount(server);
    const se = await startSpeechEngineApp(key, (transcript, signal) => wordByWord(`You said: ${transcript.at(-1)!.content}`, signal, 50));
    const i = await converse(await signedUrl(key, await engine(key, "", { ws_url: se.url })), "Hello.");
    const r = await until(i, (r) => r.messages.length >= 3 && r.audioBytes[2] > 32_000 && r.modes.at(-1) === "listening");
    await end(i);
    await until(i, (r) => r.disconnected !== undefined);
    await se.stop();

    expect(se.seen.init).toBe(r.connected!);
    expect(se.seen.transcripts[0]).toEqual([
      { role: "agent", content: "Hello." },
      { role: "user", content: "thank you very much for your help" },
    ]);
    expect(r.messages.slice(0, 3)).toEqual([
      { source: "ai", message: "Hello.", event_id: 1 },
      { source: "user", message: "thank you very much for your help", event_id: undefined },
      { source: "ai", message: "You said: thank you very much for your help", event_id: 2 },
    ]);
    expect(r.outputPeaks[2]).toBeGreaterThan(0.05);
    expect(r.errors).toEqual([]);
    expect(se.seen.errors).toEqual([]);
  }, 60_000);

  test("barge-in with a Speech Engine app: the microphone talks over an answer still streaming; its signal aborts, none of it comes after the interruption, the next answer is heard", async () => {
    const { key } = await fundedAccount(server);
    // The first answer streams slowly (it is still being made when the caller talks over it); later ones at once.
    const se = await startSpeechEngineApp(key, (transcript, signal) => wordByWord(transcript.length === 2 ? `${LONG_ANSWER} ${LONG_ANSWER}` : "Okay.", signal, transcript.length === 2 ? 300 : 0));
    const i = await converse(await signedUrl(key, await engine(key, "", { ws_url: se.url })), "Hello.");
    const r = await until(i, (r) => r.interruptions.length > 0 && r.outputPeaks[3] > 0.05);
    await end(i);
    await until(i, (r) => r.disconnected !== undefined);
    await se.stop();

    expect(r.interruptions).toEqual([2]);
    // The new transcript aborted the answer being streamed, and holds what the caller heard of it.
    expect(se.seen.signals[0]!.aborted).toBe(true);
    const second = se.seen.transcripts[1]!;
    expect(second.slice(0, 2)).toEqual(se.seen.transcripts[0]!);
    const heard = second[2]!;
    expect(heard.role).toBe("agent");
    expect(LONG_ANSWER.startsWith(heard.content)).toBe(true);
    expect(heard.content.length).toBeLessThan(LONG_ANSWER.length);
    expect(second.at(-1)!.role).toBe("user");
    expect(r.messages.at(-1)).toEqual({ source: "ai", message: "Okay.", event_id: 3 });
    interruptedAnswer(r, 2, 3);
  }, 60_000);
});
