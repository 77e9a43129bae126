import { describe, expect, test } from "bun:test";
import { Lexicon } from "../src/pronunciation/lexicon.ts";
import { PronouncedStream } from "../src/pronunciation/pronounced-stream.ts";
import type { TtsEvent, TtsStream } from "../src/providers/types.ts";
import { AsyncQueue } from "../src/util/async-queue.ts";

// The stream a provider is given with dictionaries applied, against a provider that times each
// character it is handed: what comes back counts and times the caller's text.

class TimingProvider implements TtsStream {
  readonly audioFormat = { encoding: "pcm_s16le", sampleRate: 16_000, channels: 1 } as const;
  readonly written: string[] = [];
  given = 0;
  private readonly queue = new AsyncQueue<TtsEvent>();
  private clock = 0;
  write(text: string): void {
    this.written.push(text);
    const chars = [...text];
    this.given += chars.length;
    this.queue.push({ type: "alignment", alignment: { chars, starts: chars.map((_, i) => this.clock + i), ends: chars.map((_, i) => this.clock + i + 1) } });
    this.clock += chars.length;
    this.queue.push({ type: "spoken", chars: this.given });
  }
  flush(): void {}
  end(): void {
    this.queue.end();
  }
  cancel(): void {}
  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }
}

const lexicon = new Lexicon([
  {
    id: "d1",
    versionId: "v1",
    rules: [
      { type: "alias", string_to_replace: "TTS", alias: "text to speech", case_sensitive: true, word_boundaries: true },
      { type: "alias", string_to_replace: "vox", alias: "box", case_sensitive: false, word_boundaries: false },
    ],
  },
]);

describe("PronouncedStream", () => {
  test("timings, spoken counts and given are the caller's; the provider is handed whole utterances with the rules applied", async () => {
    const inner = new TimingProvider();
    const stream = new PronouncedStream(inner, lexicon, undefined);
    stream.write("I like T");
    expect(inner.written).toEqual([]); // no sentence yet: nothing handed on
    expect(stream.given).toBe(0);
    stream.write("TS. Voxes");
    stream.end();
    expect(inner.written).toEqual(["I like text to speech. ", "boxes"]);
    expect(stream.given).toBe("I like TTS. Voxes".length);
    const events: TtsEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const timed = events.flatMap((e) => (e.type === "alignment" ? e.alignment.chars : []));
    expect(timed.join("")).toBe("I like TTS. Voxes");
    const first = events.find((e) => e.type === "alignment")!;
    if (first.type !== "alignment") throw new Error("unreachable");
    // "TTS" takes the span of "text to speech" (7 to 21), a third each.
    const t = first.alignment.chars.indexOf("T");
    expect([first.alignment.starts[t], first.alignment.ends[t + 2]]).toEqual([7, 21]);
    expect(first.normalized?.chars.join("")).toBe("I like text to speech. ");
    expect(events.filter((e) => e.type === "spoken").map((e) => (e.type === "spoken" ? e.chars : 0))).toEqual([12, 17]);
  });

  test("the version names each dictionary's version in order; rules do not match inside words unless told", () => {
    expect(lexicon.version).toBe("d1@v1");
    expect(new Lexicon([]).version).toBe("");
    expect(lexicon.apply("TTSes and TTS", undefined)).toBe("TTSes and text to speech");
  });
});
