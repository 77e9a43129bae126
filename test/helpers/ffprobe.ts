// Audio read back by independent decoders (Debian's ffprobe and ffmpeg), to check what the router encoded.

export interface Probed {
  codec: string;
  sampleRate: number;
  channels: number;
  /** The stream's bit rate in bits per second, when the container states one. */
  bitRate?: number;
  /** Seconds of audio ffmpeg decodes from the file (not a header's claim, which streamed WAV cannot make). */
  seconds: number;
  /** The file's size. */
  bytes: number;
}

export async function ffprobe(bytes: Uint8Array, ext: string): Promise<Probed> {
  const path = `/tmp/voxroute-probe-${crypto.randomUUID()}.${ext}`;
  await Bun.write(path, bytes);
  try {
    const run = Bun.spawnSync(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,bit_rate", "-of", "json", path]);
    if (run.exitCode !== 0) throw new Error(`ffprobe failed: ${run.stderr.toString()}`);
    const s = JSON.parse(run.stdout.toString()).streams[0];
    const decoded = Bun.spawnSync(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "8000", "-"]);
    const bitRate = Number(s.bit_rate);
    return { codec: s.codec_name, sampleRate: Number(s.sample_rate), channels: s.channels, ...(bitRate ? { bitRate } : {}), seconds: decoded.stdout.byteLength / 2 / 8000, bytes: bytes.byteLength };
  } finally {
    await Bun.file(path).delete();
  }
}

/**
 * How much audio ffmpeg finds in the first `bytes` bytes of an MP3 stream: the frames ffprobe
 * lists in the whole stream (its packets, with their byte positions), each counted once it is whole.
 */
export async function mp3SecondsBefore(audio: Uint8Array): Promise<(bytes: number) => number> {
  const path = `/tmp/voxroute-probe-${crypto.randomUUID()}.mp3`;
  await Bun.write(path, audio);
  try {
    const run = Bun.spawnSync(["ffprobe", "-v", "error", "-show_entries", "packet=pos,size,duration_time", "-of", "json", path]);
    if (run.exitCode !== 0) throw new Error(`ffprobe failed: ${run.stderr.toString()}`);
    const packets = (JSON.parse(run.stdout.toString()).packets as { pos: string; size: string; duration_time: string }[]).map((p) => ({
      end: Number(p.pos) + Number(p.size),
      seconds: Number(p.duration_time),
    }));
    return (bytes) => packets.filter((p) => p.end <= bytes).reduce((n, p) => n + p.seconds, 0);
  } finally {
    await Bun.file(path).delete();
  }
}
