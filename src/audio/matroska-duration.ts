import { Decoder } from "ebml";

/**
 * A Matroska/WebM file's duration from its content: where its last block ends (its start plus the
 * spacing of the blocks before it, the frame length of a constant-frame codec like Opus). Browser
 * recordings (MediaRecorder) write no duration in the header, and a header can state any
 * duration at all; billing needs the length of the audio itself. Undefined when there is no block.
 */
export function matroskaDuration(bytes: Uint8Array): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const decoder = new Decoder();
    let scale = 1_000_000; // TimecodeScale: nanoseconds per tick
    let cluster = 0;
    let last: number | undefined;
    let frame = 0;
    decoder.on("data", ([kind, element]: [string, { name: string; value: number }]) => {
      if (kind !== "tag") return;
      if (element.name === "TimecodeScale") scale = element.value;
      else if (element.name === "Timecode") cluster = element.value;
      else if (element.name === "SimpleBlock" || element.name === "Block") {
        const at = cluster + element.value;
        if (last !== undefined && at > last) frame = at - last;
        last = Math.max(last ?? 0, at);
      }
    });
    decoder.on("error", reject);
    decoder.on("finish", () => resolve(last === undefined ? undefined : ((last + frame) * scale) / 1e9));
    decoder.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
}
