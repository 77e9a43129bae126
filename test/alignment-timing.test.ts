import { describe, expect, test } from "bun:test";
import { mp3Clock, sampleClock } from "../src/audio/audio-clock.ts";
import { speechRuns } from "../src/audio/speech-runs.ts";
import { segmentRuns } from "../src/providers/local-flite/segment-runs.ts";
import { charTimes } from "../src/providers/timing/char-times.ts";
import { phraseAnchors } from "../src/providers/timing/phrase-anchors.ts";
import { utteranceTimes } from "../src/providers/timing/utterance-times.ts";
import { WordTimer } from "../src/providers/timing/word-timer.ts";
import { mp3, speech } from "./fakes/http-fake.ts";
import { ffprobe } from "./helpers/ffprobe.ts";

// The pieces character timings are made of: interpolation between anchors, phrases laid over
// stretches of speech, Flite's printed segments, words laid over text, and the clocks that say
// how long the audio sent so far is.

const round = (xs: number[]) => xs.map((x) => Math.round(x * 1000) / 1000);

describe("charTimes", () => {
  test("characters spread linearly between anchors; anchors at one position are a pause that is no character's", () => {
    const t = charTimes("ab cd", [
      { at: 0, seconds: 1 },
      { at: 2, seconds: 2 },
      { at: 3, seconds: 3 }, // the space spans 2 → 3 s
      { at: 5, seconds: 4 },
      { at: 5, seconds: 9 }, // silence after the text
    ]);
    expect(t.chars).toEqual(["a", "b", " ", "c", "d"]);
    expect(round(t.starts)).toEqual([1, 1.5, 2, 3, 3.5]);
    expect(round(t.ends)).toEqual([1.5, 2, 3, 3.5, 4]);
  });

  test("times never go back, even when the anchors do; code points, not UTF-16 units", () => {
    const t = charTimes("a👋b", [
      { at: 0, seconds: 2 },
      { at: 3, seconds: 1 },
    ]);
    expect(t.chars).toEqual(["a", "👋", "b"]);
    expect(t.starts).toEqual([2, 2, 2]);
  });
});

describe("phrases over speech", () => {
  test("as many phrases as stretches of speech: each phrase over its stretch", () => {
    expect(
      phraseAnchors("Hello there, my friend.", [
        [0.2, 0.8],
        [1.1, 1.9],
      ]),
    ).toEqual([
      { at: 0, seconds: 0.2 },
      { at: 12, seconds: 0.8 },
      { at: 13, seconds: 1.1 },
      { at: 23, seconds: 1.9 },
    ]);
  });

  test("a different count: the whole text over the first start to the last end; none without speech", () => {
    expect(phraseAnchors("Hello there, my friend.", [[0.2, 1.9]])).toEqual([
      { at: 0, seconds: 0.2 },
      { at: 23, seconds: 1.9 },
    ]);
    expect(phraseAnchors("Hello.", [])).toEqual([]);
  });

  test("an utterance's white space before and after its text spans the silences around its speech, from where the stream stands", () => {
    const t = utteranceTimes(
      " Hi. ",
      "Hi.",
      [
        { at: 0, seconds: 0.2 },
        { at: 3, seconds: 0.5 },
      ],
      10,
      0.6,
    );
    expect(t.chars).toEqual([" ", "H", "i", ".", " "]);
    expect(round(t.starts)).toEqual([10, 10.2, 10.3, 10.4, 10.5]);
    expect(round(t.ends)).toEqual([10.2, 10.3, 10.4, 10.5, 10.6]);
  });

  test("Flite's -psdur print: stretches between its pauses", () => {
    expect(segmentRuns("pau:0.164 hh:0.255 ax:0.304 l:0.412 pau:0.52 m:0.6 ay:0.7 pau:0.9 \n")).toEqual([
      [0.164, 0.412],
      [0.52, 0.7],
    ]);
  });

  test("speech in PCM: loud stretches split by pauses of 150 ms or more, shorter gaps kept inside", () => {
    const rate = 16000;
    const samples = new Int16Array(rate); // 1 s: loud 0.1–0.3, 0.35–0.4 (a 50 ms gap), 0.6–0.7
    for (const [from, to] of [
      [0.1, 0.3],
      [0.35, 0.4],
      [0.6, 0.7],
    ])
      for (let i = from * rate; i < to * rate; i++) samples[i] = 5000;
    expect(speechRuns(new Uint8Array(samples.buffer), rate).map(round)).toEqual([
      [0.1, 0.4],
      [0.6, 0.7],
    ]);
  });
});

describe("words over text", () => {
  test("the n-th word over the n-th run of non-space, the space before it over the gap; the rest up to a mark at the last word's end", () => {
    const timer = new WordTimer();
    timer.write("Hi, you there. ");
    const first = timer.words([
      { start: 0.1, end: 0.3 },
      { start: 0.4, end: 0.6 },
    ]);
    expect(first.chars.join("")).toBe("Hi, you");
    expect(round(first.starts)).toEqual([0.1, 0.167, 0.233, 0.3, 0.4, 0.467, 0.533]);
    expect(timer.until).toBe(0.6);
    timer.write("More");
    const mark = timer.written - 4; // a flush before "More"
    expect(timer.words([{ start: 0.7, end: 1 }]).chars.join("")).toBe(" there.");
    const rest = timer.rest(mark);
    expect(rest.chars).toEqual([" "]);
    expect(rest.starts).toEqual([1]);
    expect(timer.rest().chars.join("")).toBe("More");
  });
});

describe("clocks", () => {
  test("PCM and G.711: bytes over the bytes a second", () => {
    const pcm = sampleClock(16000, 2);
    expect(pcm.advance(new Uint8Array(16000))).toBe(0.5);
    expect(pcm.advance(new Uint8Array(16000))).toBe(1);
    expect(sampleClock(8000, 1).advance(new Uint8Array(4000))).toBe(0.5);
  });

  test("MP3: whole frames counted as chunks cut anywhere bring them, to the length ffmpeg decodes", async () => {
    const audio = mp3(speech("A sentence long enough for a few dozen frames of MP3.", 16000), 16000);
    const clock = mp3Clock();
    let seconds = 0;
    for (let at = 0; at < audio.byteLength; at += 333) seconds = clock.advance(audio.subarray(at, at + 333));
    const probed = await ffprobe(audio, "mp3");
    expect(Math.abs(seconds - probed.seconds)).toBeLessThan(0.002); // every frame counted once, none missed
    expect(seconds).toBeGreaterThan(2);
  });
});
