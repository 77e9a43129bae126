import { flacFrame, streamInfoRate } from "./flac.ts";
import { frameStreamSeconds, mpegFrame } from "./mpeg.ts";
import { opusPacketSamples } from "./opus.ts";
import { vorbisClock } from "./vorbis.ts";

/** How long a container's packets of one codec play: each packet measured from its own bytes, in stream order. */
export type PacketClock = (packet: Uint8Array) => number;

export const opusClock: PacketClock = (packet) => opusPacketSamples(packet) / 48000;

export function vorbisPacketClock(identification: Uint8Array, setup: Uint8Array): PacketClock {
  const clock = vorbisClock(identification, setup);
  return (packet) => clock.samples(packet) / clock.rate;
}

/** One FLAC frame a packet; `streamInfo` is the STREAMINFO block's data, for frames that defer to its rate. */
export function flacClock(streamInfo: Uint8Array): PacketClock {
  const rate = streamInfoRate(streamInfo);
  return (packet) => {
    const frame = flacFrame(packet, 0);
    return frame && (frame.rate || rate) ? frame.samples / (frame.rate || rate) : 0;
  };
}

/** Codecs whose every packet plays the same time (AAC: one frame each). */
export const fixedClock =
  (seconds: number): PacketClock =>
  () =>
    seconds;

export const mpegClock: PacketClock = (packet) => frameStreamSeconds(packet, mpegFrame, 0);

export const pcmClock =
  (bytesPerFrame: number, rate: number): PacketClock =>
  (packet) =>
    Math.floor(packet.length / bytesPerFrame) / rate;
