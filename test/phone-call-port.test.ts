import { expect, test } from "bun:test";
import pino from "pino";
import { FRAME_BYTES, phoneCallPort } from "../src/surfaces/telephony/phone-call-port.ts";
import { twilioMediaWire } from "../src/surfaces/telephony/twilio-media-wire.ts";
import type { WsPort } from "../src/surfaces/ws-port.ts";

// The phone port against a carrier socket that falls behind (each frame waits until the test lets
// it go): `clear` goes at once, ahead of frames of the interrupted answer still waiting, which are
// then never sent; tones and marks keep their turn behind the audio given before them.

function slowSocket() {
  const sent: Record<string, any>[] = [];
  const waiting: (() => void)[] = [];
  const port = {
    sendEvent: (event: Record<string, unknown>) => void sent.push(event),
    sendAudio: (frame: string) => {
      sent.push(JSON.parse(frame));
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    close: () => {},
  } as unknown as WsPort;
  /** Lets every frame waiting go, until nothing more waits. */
  const drain = async () => {
    while (waiting.length) {
      waiting.shift()!();
      await Bun.sleep(0);
    }
  };
  return { port, sent, drain };
}

const answerAudio = (frames: number, byte: number) => new Uint8Array(frames * FRAME_BYTES).fill(byte);
const bytesOf = (frame: Record<string, any>) => Buffer.from(frame.media.payload, "base64");

test("a barge-in's clear goes ahead of the frames still waiting, and none of the interrupted answer follows it", async () => {
  const { port, sent, drain } = slowSocket();
  const call = phoneCallPort(port, twilioMediaWire.reply("MZ1"), pino({ level: "silent" }));
  void call.sendAudio(answerAudio(10, 0x11));
  expect(sent.map((f) => f.event)).toEqual(["media"]);
  call.event({ type: "response_interrupted", responseId: "resp_1", spokenText: "", audioMs: 20 });
  expect(sent.map((f) => f.event)).toEqual(["media", "clear"]);
  await drain();
  expect(sent.map((f) => f.event)).toEqual(["media", "clear"]);
});

test("digits asked for while an answer is still being sent play after it, and its mark after its audio", async () => {
  const { port, sent, drain } = slowSocket();
  const call = phoneCallPort(port, twilioMediaWire.reply("MZ1"), pino({ level: "silent" }));
  void call.sendAudio(answerAudio(3, 0x11));
  call.event({ type: "response_audio_done", responseId: "resp_1", characters: 5, audioMs: 60 });
  call.event({ type: "send_digits", digits: "1" });
  await drain();
  const kinds = sent.map((f) => (f.event === "media" ? (bytesOf(f)[0] === 0x11 ? "answer" : "tone") : f.event));
  expect(kinds).toEqual(["answer", "answer", "answer", "mark", ...Array(10).fill("tone")]);
});
