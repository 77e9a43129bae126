import { afterAll, describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import type { ApiError } from "../src/errors.ts";
import type { TtsPort, TtsSessionEvent } from "../src/sessions/tts-events.ts";
import { FrameAligner } from "../src/surfaces/el/stream-input-alignment.ts";
import { StreamInputPort } from "../src/surfaces/el/stream-input-port.ts";
import { HttpTtsPort } from "../src/surfaces/http-tts-port.ts";
import { NativeTtsPort } from "../src/surfaces/native/tts-wire.ts";

// Every TTS session event through every surface's port, over real sockets: the exact frames each
// wire gets (the native ones byte for byte as docs/tts-websocket.md shows them), and the events a
// surface has no word for produce nothing. Keyed by type, so a new event variant does not compile
// here until it has a sample.

const EVERY_EVENT: { [K in TtsSessionEvent["type"]]: Extract<TtsSessionEvent, { type: K }>[] } = {
  provider_status: [
    { type: "provider_status", provider: "elevenlabs", model: "elevenlabs/eleven_flash_v2_5", status: "failed", reason: "connection refused" },
    { type: "provider_status", provider: "flite", model: "cmu/flite", status: "connecting" },
  ],
  ready: [{ type: "ready", sessionId: "tts_1" }],
  audio_started: [{ type: "audio_started", provider: "flite", model: "cmu/flite", format: { encoding: "pcm_s16le", sampleRate: 16000, channels: 1 } }],
  flushed: [{ type: "flushed" }],
  alignment: [
    {
      type: "alignment",
      alignment: { chars: ["H", "i"], starts: [0.1, 0.25], ends: [0.25, 0.4] },
      normalized: { chars: ["h", "i"], starts: [0.1, 0.25], ends: [0.25, 0.4] },
    },
  ],
  error: [
    { type: "error", code: "invalid_request", message: 'flite has no voice "nobody"', param: "voice" },
    { type: "error", code: "invalid_tts_frame", message: "not JSON" },
  ],
  ended: [{ type: "ended", sessionId: "tts_1", provider: "flite", model: "cmu/flite", characters: 44, audioBytes: 4 }],
};
const events = Object.values(EVERY_EVENT).flat() as TtsSessionEvent[];
const AUDIO = new Uint8Array([1, 2, 3, 4]);

/** Frames as the client received them: text as sent, binary as `<binary n>`. */
type Frame = string;

const servers: { stop(force: boolean): void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** Every event, one audio chunk, then close 1000. */
async function everything(port: TtsPort, audio: Uint8Array): Promise<void> {
  for (const event of events) port.event(event);
  await port.sendAudio(audio);
  port.close(1000, "tts_complete");
}

/** A real socket whose server side is `makePort(raw)`, fed by `feed` (by default every event, one audio chunk, then close 1000). */
async function framesThrough(
  makePort: (raw: ServerWebSocket<unknown>) => TtsPort,
  audio = AUDIO,
  feed: (port: TtsPort, audio: Uint8Array) => Promise<void> = everything,
): Promise<{ frames: Frame[]; close: { code: number; reason: string } }> {
  const server = Bun.serve({
    port: 0,
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("upgrade", { status: 400 })),
    websocket: {
      open: (raw) => feed(makePort(raw as ServerWebSocket<unknown>), audio),
      message() {},
    },
  });
  servers.push(server);
  const ws = new WebSocket(`ws://localhost:${server.port}`);
  ws.binaryType = "arraybuffer";
  const frames: Frame[] = [];
  ws.onmessage = (e) => frames.push(typeof e.data === "string" ? e.data : `<binary ${(e.data as ArrayBuffer).byteLength}>`);
  const close = await new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  return { frames, close };
}

describe("/v1/tts frames", () => {
  test("every event is its service.tts_* frame, in order; audio is a binary frame", async () => {
    const { frames, close } = await framesThrough((raw) => new NativeTtsPort(raw));
    expect(frames).toEqual([
      '{"type":"service.tts_provider_status","provider":"elevenlabs","model":"elevenlabs/eleven_flash_v2_5","status":"failed","reason":"connection refused"}',
      '{"type":"service.tts_provider_status","provider":"flite","model":"cmu/flite","status":"connecting"}',
      '{"type":"service.tts_session_ready","session_id":"tts_1"}',
      '{"type":"service.tts_audio_started","provider":"flite","model":"cmu/flite","encoding":"pcm_s16le","sample_rate":16000,"channels":1}',
      '{"type":"service.tts_flushed"}',
      '{"type":"service.tts_alignment","alignment":{"characters":["H","i"],"start_times":[0.1,0.25],"end_times":[0.25,0.4]},"normalized_alignment":{"characters":["h","i"],"start_times":[0.1,0.25],"end_times":[0.25,0.4]}}',
      '{"type":"service.tts_error","code":"invalid_request","message":"flite has no voice \\"nobody\\"","param":"voice"}',
      '{"type":"service.tts_error","code":"invalid_tts_frame","message":"not JSON"}',
      '{"type":"service.tts_session_ended","session_id":"tts_1","provider":"flite","model":"cmu/flite","characters":44,"audio_bytes":4}',
      "<binary 4>",
    ]);
    expect(close).toEqual({ code: 1000, reason: "tts_complete" });
  });
});

describe("/el stream-input frames", () => {
  test("errors in ElevenLabs' shape, isFinal for the end, audio as base64 in a text frame; status, readiness, flushes and (without sync_alignment) timings say nothing", async () => {
    const { frames, close } = await framesThrough((raw) => new StreamInputPort(raw, undefined));
    expect(frames).toEqual([
      '{"message":"flite has no voice \\"nobody\\"","error":"invalid_request","code":1008}',
      '{"message":"not JSON","error":"invalid_input_message","code":1008}',
      '{"isFinal":true}',
      '{"audio":"AQIDBA==","isFinal":null,"normalizedAlignment":null,"alignment":null}',
    ]);
    expect(close).toEqual({ code: 1000, reason: "tts_complete" });
  });

  test("sync_alignment: each audio frame carries the characters that start in it, timed in ms from the frame's start; the rest go in a frame of no audio before isFinal", async () => {
    const tenthOfASecond = new Uint8Array(3200); // at 16 kHz
    const { frames } = await framesThrough(
      (raw) => new StreamInputPort(raw, { rate: 16000 }, undefined, new FrameAligner()),
      tenthOfASecond,
      async (port, audio) => {
        port.event(EVERY_EVENT.audio_started[0]);
        port.event({ type: "alignment", alignment: { chars: ["H", "i", "!"], starts: [0.02, 0.13, 0.2], ends: [0.13, 0.18, 0.2] }, normalized: { chars: ["h"], starts: [0.05], ends: [0.3] } });
        await port.sendAudio(audio);
        await port.sendAudio(audio);
        port.event(EVERY_EVENT.ended[0]);
        port.close(1000, "tts_complete");
      },
    );
    const timing = (chars: string[], charStartTimesMs: number[], charDurationsMs: number[]) => ({ chars, charStartTimesMs, charDurationsMs });
    expect(frames.map((f) => ({ ...JSON.parse(f), audio: JSON.parse(f).audio?.length }))).toEqual([
      { audio: 4268, isFinal: null, alignment: timing(["H"], [20], [110]), normalizedAlignment: timing(["h"], [50], [250]) },
      { audio: 4268, isFinal: null, alignment: timing(["i"], [30], [50]), normalizedAlignment: timing([], [], []) },
      { audio: 0, isFinal: null, alignment: timing(["!"], [0], [0]), normalizedAlignment: timing([], [], []) },
      { isFinal: true },
    ]);
  });

  test("audio_started's format decides the PCM conversion: 16 kHz PCM promised as µ-law at 8 kHz is a quarter of the bytes", async () => {
    const pcm16k = new Uint8Array(3200); // 0.1 s
    const { frames } = await framesThrough((raw) => new StreamInputPort(raw, { rate: 8000, companding: "ulaw" }), pcm16k);
    const audio = frames.map((f) => JSON.parse(f)).filter((f) => typeof f.audio === "string");
    const bytes = audio.reduce((n, f) => n + Buffer.from(f.audio, "base64").byteLength, 0);
    // 1600 samples at 16 kHz are 800 one-byte samples at 8 kHz, less what the resampler holds back.
    expect(bytes).toBeGreaterThan(700);
    expect(bytes).toBeLessThanOrEqual(800);
  });
});

describe("HTTP TTS", () => {
  const errorResponse = (e: ApiError) => Response.json({ code: e.code, param: e.extra.param ?? null }, { status: e.status });

  test("audio_started sets the content type from the provider's format; the other events change nothing before the body", async () => {
    const port = new HttpTtsPort({ contentType: (f) => `audio/L16; rate=${f.sampleRate}; channels=${f.channels}` }, errorResponse);
    for (const event of events.filter((e) => e.type !== "error")) port.event(event);
    port.sendAudio(AUDIO);
    port.close(1000, "tts_complete");
    const res = await port.response;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/L16; rate=16000; channels=1");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(AUDIO);
  });

  test("an error event before any audio is the response, with its status and param", async () => {
    const port = new HttpTtsPort({ contentType: () => "audio/mpeg" }, errorResponse);
    port.event(EVERY_EVENT.error[0]);
    port.close(1008, "invalid_request");
    const res = await port.response;
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: "invalid_request", param: "voice" });
  });
});
