import { afterAll, describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import type { SttSessionEvent } from "../src/sessions/stt-events.ts";
import { nativeSttPort, type SttWireEvent, sttWireEvent } from "../src/surfaces/native/stt-wire.ts";
import { countWrites, type Writes } from "./helpers/counted-writes.ts";

// Every STT session event through the `/v1/stt` port, over a real socket: the exact bytes the
// client gets, numbered on the socket; and the frames docs/stt-websocket.md shows are what the
// mapper makes of the same events. Keyed by type, so a new event variant does not compile here
// until it has a sample.

const EVERY_EVENT: { [K in SttSessionEvent["type"]]: Extract<SttSessionEvent, { type: K }>[] } = {
  started: [
    {
      type: "started",
      sessionId: "stt_a",
      provider: "pocketsphinx",
      model: "cmu/pocketsphinx-en-us",
      input: { audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, language: null, interimResults: true, commitStrategy: "auto", turnDetection: "acoustic", turnDetector: "router_vad" },
    },
    {
      type: "started",
      sessionId: "stt_a",
      provider: "deepgram",
      model: "deepgram/flux-general-en",
      input: { audioFormat: "ulaw_8000", sampleRate: 8000, channels: 2, language: "en", interimResults: false, commitStrategy: "manual", turnDetection: "semantic", turnDetector: "provider" },
    },
  ],
  switched: [
    {
      type: "switched",
      provider: "pocketsphinx",
      model: "cmu/pocketsphinx-en-us",
      previous: "deepgram",
      reason: "deepgram said nothing for 10000 ms while it was sent audio",
      fromMs: 3720,
      input: { audioFormat: "pcm_16000", sampleRate: 16000, channels: 1, language: null, interimResults: true, commitStrategy: "auto", turnDetection: "acoustic", turnDetector: "router_vad" },
    },
  ],
  signal: [
    { type: "signal", origin: "router", signal: "started", scope: "utterance", turnId: "turn_1", atMs: 1216 },
    { type: "signal", origin: "provider", signal: "eager_end", scope: "turn", turnId: "turn_2", atMs: 0 },
  ],
  transcript: [
    { type: "transcript", final: false, turnId: "turn_1", text: "thank you very", startMs: 0, endMs: 1760 },
    { type: "transcript", final: true, turnId: "turn_1", text: 'say "ça va"', startMs: 10, endMs: 3720 },
  ],
  committed: [{ type: "committed", turnId: "turn_1", origin: "client", atMs: 3720 }],
  cleared: [{ type: "cleared", turnId: "turn_2", atMs: 6400 }],
  // A /v1/stt session never asks for the VAD's scores: one that came would not be framed (nor numbered).
  vad: [{ type: "vad", turnId: "turn_2", score: 0.98, atMs: 6656 }],
  error: [{ type: "error", code: "upstream_error", message: "deepgram closed the stream" }],
  ended: [
    { type: "ended", sessionId: "stt_a", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", audioMs: 3400, billedSeconds: 4 },
    { type: "ended", sessionId: "stt_a", audioMs: 0, billedSeconds: 0 },
  ],
};
const events = Object.values(EVERY_EVENT).flat() as SttSessionEvent[];

const servers: { stop(force: boolean): void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/**
 * A real socket whose server side is a `NativeSttPort` for session `stt_a`, fed every event, then
 * close: in the socket's open callback, or (`later`) from outside its callbacks, as a provider's events come.
 */
async function framesThrough(later = false): Promise<{ frames: string[]; close: { code: number; reason: string }; writes: Writes }> {
  let writes!: Writes;
  const server = Bun.serve({
    port: 0,
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("upgrade", { status: 400 })),
    websocket: {
      open(raw) {
        writes = countWrites(raw);
        const port = nativeSttPort(raw as ServerWebSocket<unknown>, "stt_a");
        const feed = () => {
          for (const event of events) port.event(event);
          port.close(1000, "stt_complete");
          port.event({ type: "error", code: "upstream_error", message: "after the close: not sent" });
        };
        if (later) setTimeout(feed, 0);
        else feed();
      },
      message() {},
    },
  });
  servers.push(server);
  const ws = new WebSocket(`ws://localhost:${server.port}`);
  const frames: string[] = [];
  ws.onmessage = (e) => frames.push(typeof e.data === "string" ? e.data : "<binary>");
  const close = await new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  return { frames, close, writes };
}

describe("/v1/stt frames of STT session events", () => {
  test("every event as its JSON text frame, byte for byte, numbered from 1 without gaps on the socket", async () => {
    const { frames, close } = await framesThrough();
    expect(frames).toEqual([
      '{"type":"stt.session.started","event_id":"stt_a.1","seq":1,"session_id":"stt_a","provider":"pocketsphinx","model":"cmu/pocketsphinx-en-us","input_config":{"audio_format":"pcm_16000","sample_rate":16000,"channels":1,"language":null,"interim_results":true,"commit_strategy":"auto","turn_detection":"acoustic","turn_detector":"router_vad","event_format":"normalized"}}',
      '{"type":"stt.session.started","event_id":"stt_a.2","seq":2,"session_id":"stt_a","provider":"deepgram","model":"deepgram/flux-general-en","input_config":{"audio_format":"ulaw_8000","sample_rate":8000,"channels":2,"language":"en","interim_results":false,"commit_strategy":"manual","turn_detection":"semantic","turn_detector":"provider","event_format":"normalized"}}',
      '{"type":"stt.provider.switched","event_id":"stt_a.3","seq":3,"provider":"pocketsphinx","model":"cmu/pocketsphinx-en-us","previous_provider":"deepgram","reason":"deepgram said nothing for 10000 ms while it was sent audio","audio_ms":3720,"input_config":{"audio_format":"pcm_16000","sample_rate":16000,"channels":1,"language":null,"interim_results":true,"commit_strategy":"auto","turn_detection":"acoustic","turn_detector":"router_vad","event_format":"normalized"}}',
      '{"type":"stt.signal","event_id":"stt_a.4","seq":4,"origin":"router","signal":"started","turn_scope":"utterance","basis":["vad"],"turn_id":"turn_1","audio_ms":1216}',
      '{"type":"stt.signal","event_id":"stt_a.5","seq":5,"origin":"provider","signal":"eager_end","turn_scope":"turn","basis":["provider"],"turn_id":"turn_2","audio_ms":0}',
      '{"type":"stt.transcript.interim","event_id":"stt_a.6","seq":6,"turn_id":"turn_1","text":"thank you very","audio_start_ms":0,"audio_end_ms":1760}',
      '{"type":"stt.transcript.final","event_id":"stt_a.7","seq":7,"turn_id":"turn_1","text":"say \\"ça va\\"","audio_start_ms":10,"audio_end_ms":3720}',
      '{"type":"stt.audio.committed","event_id":"stt_a.8","seq":8,"turn_id":"turn_1","origin":"client","audio_ms":3720}',
      '{"type":"stt.audio.cleared","event_id":"stt_a.9","seq":9,"turn_id":"turn_2","audio_ms":6400}',
      '{"type":"stt.error","event_id":"stt_a.10","seq":10,"code":"upstream_error","message":"deepgram closed the stream"}',
      '{"type":"stt.session.ended","event_id":"stt_a.11","seq":11,"session_id":"stt_a","provider":"pocketsphinx","model":"cmu/pocketsphinx-en-us","audio_ms":3400,"billed_seconds":4}',
      '{"type":"stt.session.ended","event_id":"stt_a.12","seq":12,"session_id":"stt_a","audio_ms":0,"billed_seconds":0}',
    ]);
    expect(close).toEqual({ code: 1000, reason: "stt_complete" });
  });

  test("a burst of events in one loop turn, outside the socket's callbacks: the first written at once, the rest in one corked write, in order", async () => {
    const inCallback = await framesThrough();
    const { frames, close, writes } = await framesThrough(true);
    expect(frames).toEqual(inCallback.frames);
    expect(close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(writes).toEqual({ alone: 1, corked: 1 });
  });

  test("the examples in docs/stt-websocket.md are the frames of the events they describe", async () => {
    const doc = await Bun.file(new URL("../docs/stt-websocket.md", import.meta.url)).text();
    const section = doc.slice(doc.indexOf("## Server events"), doc.indexOf("## `event_format=provider`"));
    const examples = [...section.matchAll(/```json\n([\s\S]*?)```/g)].flatMap((m) => m[1].split(/\n(?=\{)/).map((text) => JSON.parse(text) as Record<string, unknown>));
    const documented = [
      EVERY_EVENT.started[0],
      EVERY_EVENT.switched[0],
      { type: "signal", origin: "router", signal: "started", scope: "utterance", turnId: "turn_1", atMs: 1216 },
      { type: "signal", origin: "router", signal: "end", scope: "utterance", turnId: "turn_1", atMs: 3200 },
      EVERY_EVENT.transcript[0],
      { type: "transcript", final: true, turnId: "turn_1", text: "thank you very much for your help", startMs: 0, endMs: 3720 },
      { type: "committed", turnId: "turn_1", origin: "router", atMs: 3720 },
      EVERY_EVENT.cleared[0],
      EVERY_EVENT.ended[0],
    ] as SttWireEvent[];
    expect(examples).toHaveLength(documented.length);
    examples.forEach((example, i) => {
      const { event_id: _id, seq: _seq, ...frame } = example;
      // The docs write the session id as "stt_…"; key order matters, so compare the JSON text.
      expect(JSON.stringify(sttWireEvent(documented[i])).replaceAll("stt_a", "stt_…")).toBe(JSON.stringify(frame));
    });
  });
});
