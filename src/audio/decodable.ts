/**
 * Which of audio/decode.ts's decoders reads a probed container (`Probe.container`): WAV and raw
 * MPEG audio; undefined for the rest, which go to providers that read them as they are. A WAV
 * other than 16-bit PCM is known only from its `fmt ` (refused when decoding is opened).
 */
export function decoderFor(container: string): "wav" | "mp3" | undefined {
  if (/^WAVE/i.test(container)) return "wav";
  if (/^MPEG$/i.test(container)) return "mp3";
  return undefined;
}
