import type { DeepgramFault, FakeSocket, FakeWs, SocketRecord } from "./deepgram.ts";

// Deepgram Flux (`wss://…/v2/listen`) for the fake: `Connected` first, then turns found in the
// audio itself (20 ms windows of linear16 or µ-law; speech is energy above a floor): `StartOfTurn`
// at the first speech, `Update` every 240 ms of turn audio with the cumulative transcript,
// `EagerEndOfTurn` (only with `eager_eot_threshold`) and `TurnResumed` when speech comes back,
// `EndOfTurn` after enough silence (`trigger` `model`, or `timeout` at `eot_timeout_ms`, or
// `manual` for `ForceEndTurn`). The thresholds set how much silence counts: `eot_threshold` 0.7
// waits 700 ms, `eager_eot_threshold` 0.5 waits 250 ms; `eot_threshold=1` leaves only the timeout.
// `CloseStream` ends an open turn and closes 1000. Any other client text (`Configure` too: not
// faked) is answered with `Error` UNPARSABLE_CLIENT_MESSAGE and close 1011.
// Every server message carries `sequence_id`, counting from 0.

const WORDS = "thank you very much for your help".split(" ");
const WINDOW_S = 0.02;
const UPDATE_S = 0.24;
const SPEECH_RMS = 300;
/** The "drop" fault closes the socket once this much audio was heard. */
const DROP_AFTER_S = 2;

const RANGES: [name: string, min: number, max: number][] = [
  ["eot_threshold", 0.5, 1],
  ["eager_eot_threshold", 0.3, 0.9],
  ["eot_timeout_ms", 500, 60000],
];

/** Why Deepgram would refuse this handshake (400), if it would. */
export function fluxQueryProblem(query: URLSearchParams): string | undefined {
  if (!query.get("model")?.startsWith("flux-")) return "No such model.";
  for (const [name, min, max] of RANGES) {
    const v = query.get(name);
    if (v !== null && !(Number(v) >= min && Number(v) <= max)) return `${name} must be between ${min} and ${max}.`;
  }
  if (query.has("language_hint") && query.get("model") !== "flux-general-multi") return "language_hint is only supported by flux-general-multi.";
}

/** µ-law byte to its linear sample (G.711). */
function ulaw(byte: number): number {
  const u = ~byte & 0xff;
  const magnitude = (((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 0x07);
  return u & 0x80 ? 0x84 - magnitude : magnitude - 0x84;
}

export function fluxSocket(query: URLSearchParams, record: SocketRecord, fault: DeepgramFault | undefined): FakeSocket {
  const mulaw = query.get("encoding") === "mulaw";
  const rate = Number(query.get("sample_rate") ?? 16000);
  const windowBytes = Math.round(rate * WINDOW_S) * (mulaw ? 1 : 2);
  const eotThreshold = Number(query.get("eot_threshold") ?? 0.7);
  const eager = query.has("eager_eot_threshold") ? 0.15 + (Number(query.get("eager_eot_threshold")) - 0.3) * 0.5 : undefined;
  const timeout = Number(query.get("eot_timeout_ms") ?? 5000) / 1000;
  const modelEnd = eotThreshold >= 1 ? Infinity : 0.3 + (eotThreshold - 0.5) * 2;
  const hinted = query.getAll("language_hint");

  let sequence = 0;
  let pending = new Uint8Array(0);
  let position = 0; // seconds of audio heard
  let turn = -1;
  let inTurn = false;
  let turnStart = 0;
  let speechInTurn = 0;
  let silence = 0;
  let eagerSent = false;
  let sinceUpdate = 0;
  let spoke = false;

  const send = (ws: FakeWs, message: Record<string, unknown>) => ws.send(JSON.stringify({ ...message, sequence_id: sequence++ }));
  const turnInfo = (ws: FakeWs, event: string, extra: Record<string, unknown> = {}) => {
    const words = event === "StartOfTurn" ? [] : WORDS.slice(0, Math.ceil(speechInTurn * 3));
    send(ws, {
      type: "TurnInfo",
      request_id: "fake-flux-request",
      event,
      turn_index: turn,
      audio_window_start: round(turnStart),
      audio_window_end: round(position),
      transcript: words.join(" "),
      words: words.map((word) => ({ word, confidence: 0.97 })),
      end_of_turn_confidence: event === "EndOfTurn" ? 0.92 : event === "EagerEndOfTurn" ? 0.6 : 0.05,
      ...(hinted.length ? { languages: [hinted[0]], languages_hinted: hinted } : {}),
      ...extra,
    });
  };
  const endTurn = (ws: FakeWs, trigger: string) => {
    if (!inTurn) {
      // ForceEndTurn with nothing said: an empty turn ends.
      turn++;
      turnStart = position;
      speechInTurn = 0;
    }
    if (eager !== undefined && !eagerSent && trigger !== "manual") turnInfo(ws, "EagerEndOfTurn");
    turnInfo(ws, "EndOfTurn", { trigger });
    inTurn = false;
    eagerSent = false;
  };

  const hear = (ws: FakeWs, window: Uint8Array) => {
    let energy = 0;
    const samples = mulaw ? window.length : window.length / 2;
    const view = new DataView(window.buffer, window.byteOffset, window.byteLength);
    for (let i = 0; i < samples; i++) {
      const s = mulaw ? ulaw(window[i]) : view.getInt16(i * 2, true);
      energy += s * s;
    }
    position += WINDOW_S;
    if (Math.sqrt(energy / samples) > SPEECH_RMS) {
      silence = 0;
      speechInTurn += WINDOW_S;
      if (!inTurn) {
        inTurn = true;
        turn++;
        turnStart = position - WINDOW_S;
        speechInTurn = WINDOW_S;
        sinceUpdate = 0;
        return turnInfo(ws, "StartOfTurn");
      }
      if (eagerSent) {
        eagerSent = false;
        turnInfo(ws, "TurnResumed");
      }
    } else if (inTurn) {
      silence += WINDOW_S;
      if (eager !== undefined && !eagerSent && silence >= eager) {
        eagerSent = true;
        turnInfo(ws, "EagerEndOfTurn");
      }
      if (silence >= Math.min(modelEnd, timeout)) return endTurn(ws, silence >= timeout ? "timeout" : "model");
    }
    if (inTurn && (sinceUpdate += WINDOW_S) >= UPDATE_S - 1e-9) {
      sinceUpdate = 0;
      turnInfo(ws, "Update");
    }
  };

  return {
    open(ws) {
      if (fault !== "stall") send(ws, { type: "Connected", request_id: "fake-flux-request" });
    },
    message(ws, frame) {
      if (fault === "stall") return;
      if (typeof frame === "string") {
        record.texts.push(frame);
        let type: unknown;
        try {
          type = (JSON.parse(frame) as { type?: unknown }).type;
        } catch {}
        if (type === "ForceEndTurn") return endTurn(ws, "manual");
        if (type === "CloseStream") {
          if (inTurn) endTurn(ws, "model");
          return ws.close(1000, "");
        }
        send(ws, { type: "Error", code: "UNPARSABLE_CLIENT_MESSAGE", description: "The client message could not be parsed." });
        return ws.close(1011, "UNPARSABLE_CLIENT_MESSAGE");
      }
      record.audioBytes += frame.byteLength;
      record.received.add(frame);
      if (!spoke) {
        spoke = true;
        if (fault === "malformed") ws.send("this is not json");
        if (fault === "data-error") return ws.close(1008, "DATA-0000");
        if (fault === "error-frame") {
          send(ws, { type: "Error", code: "INTERNAL_SERVER_ERROR", description: "The server encountered an internal error." });
          return ws.close(1011, "INTERNAL_SERVER_ERROR");
        }
      }
      const audio = new Uint8Array(pending.length + frame.byteLength);
      audio.set(pending);
      audio.set(frame, pending.length);
      let at = 0;
      for (; at + windowBytes <= audio.length; at += windowBytes) hear(ws, audio.subarray(at, at + windowBytes));
      pending = audio.slice(at);
      if (fault === "drop" && position >= DROP_AFTER_S) ws.close(1011, "NET-0000");
    },
  };
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;
