import { takeSentences } from "../../src/providers/sentences.ts";
import type { DeepgramFault, FakeSocket, FakeWs, SocketRecord } from "./deepgram.ts";

// Deepgram Aura's streaming TTS (`wss://…/v1/speak`) for the fake: `Metadata` first; `Speak` text
// is buffered and each complete sentence is spoken as soon as it is in (as Deepgram chunks text
// itself); `Flush` speaks the rest and answers `Flushed`; `Clear` drops the buffer and answers
// `Cleared`; `Close` closes 1000 at once, dropping what was not flushed. Audio is real Flite speech as raw linear16
// at `sample_rate` (default 24000), in binary frames of 100 ms. `sequence_id` counts flushes and
// clears from 0.

/** Why Deepgram would refuse this handshake (400), if it would. */
export function auraQueryProblem(query: URLSearchParams): string | undefined {
  if (!query.get("model")?.startsWith("aura-")) return "No such model.";
  if ((query.get("encoding") ?? "linear16") !== "linear16") return `encoding ${query.get("encoding")} is not supported by this fake`;
}

export function auraSocket(query: URLSearchParams, record: SocketRecord, fault: DeepgramFault | undefined, synthesize: (text: string, rate: number) => Uint8Array): FakeSocket {
  const rate = Number(query.get("sample_rate") ?? 24000);
  const frameBytes = (rate / 10) * 2;
  let buffer = "";
  let sequence = 0;
  let sentAudio = false;

  const speak = (ws: FakeWs, text: string) => {
    if (!text.trim()) return;
    const audio = synthesize(text.trim(), rate);
    for (let i = 0; i < audio.length; i += frameBytes) {
      ws.send(audio.subarray(i, i + frameBytes));
      if (!sentAudio && fault === "drop") return ws.close(1011, "NET-0000");
      sentAudio = true;
    }
  };
  const speakRest = (ws: FakeWs) => {
    speak(ws, buffer);
    buffer = "";
  };

  return {
    open(ws) {
      if (fault === "stall") return;
      if (fault === "malformed") return void ws.send("this is not json");
      ws.send(JSON.stringify({ type: "Metadata", request_id: "fake-aura-request", model_name: query.get("model"), model_version: "fake", model_uuid: "fake-aura-model" }));
    },
    message(ws, frame) {
      if (fault === "stall") return;
      if (typeof frame !== "string") return ws.close(1003, "binary frames are not accepted");
      record.texts.push(frame);
      let message: { type?: string; text?: string } = {};
      try {
        message = JSON.parse(frame);
      } catch {}
      if (fault === "data-error") return ws.close(1008, "DATA-0000");
      switch (message.type) {
        case "Speak": {
          const { sentences, rest } = takeSentences(buffer + (message.text ?? ""));
          buffer = rest;
          for (const { text } of sentences) speak(ws, text);
          return;
        }
        case "Flush":
          speakRest(ws);
          return ws.send(JSON.stringify({ type: "Flushed", sequence_id: sequence++ }));
        case "Clear":
          buffer = "";
          return ws.send(JSON.stringify({ type: "Cleared", sequence_id: sequence++ }));
        case "Close": // halts at once, as Deepgram documents: what was not flushed is not spoken
          buffer = "";
          return ws.close(1000, "");
        default:
          return ws.send(JSON.stringify({ type: "Warning", description: `unknown message type ${message.type}`, code: "UNKNOWN_MESSAGE" }));
      }
    },
  };
}
