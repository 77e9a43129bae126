// An Opus packet's length, from its TOC byte (RFC 6716 §3.1): the frame size its configuration
// codes, times the frames the packet holds. In samples at 48 kHz.

const SILK = [480, 960, 1920, 2880];
const HYBRID = [480, 960];
const CELT = [120, 240, 480, 960];
/** The longest packet Opus allows: 120 ms. */
const MAX = 5760;

export function opusPacketSamples(packet: Uint8Array): number {
  if (!packet.length) return 0;
  const config = packet[0] >> 3;
  const frame = config < 12 ? SILK[config & 3] : config < 16 ? HYBRID[config & 1] : CELT[config & 3];
  const code = packet[0] & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : (packet[1] ?? 0) & 0x3f;
  return Math.min(frame * frames, MAX);
}
