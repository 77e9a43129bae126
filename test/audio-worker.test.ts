import { afterAll, describe, expect, test } from "bun:test";
import { DEFAULT_VAD } from "../src/audio/vad.ts";
import { AudioPool, type AudioLane, type AudioSessionOptions } from "../src/pools/audio-pool.ts";
import type { FromAudio } from "../workers/audio-protocol.ts";
import { NoSeat } from "../src/pools/worker-pool.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { concat, frames, silence, speak, spokenSpans, windowsBySpeech } from "./helpers/speech.ts";

const DECODERS = { perWorker: 1, queue: 4, waitMs: 10_000 };
const pool = new AudioPool(2, DECODERS);
afterAll(() => pool.close());

/** A session to its end: with a recognizer (one of the pool's decoders) unless `vadOnly`. */
async function run(options: AudioSessionOptions, audio: Uint8Array[], extra: (lane: AudioLane) => void = () => {}, vadOnly = false) {
  const events: FromAudio[] = [];
  let done!: (events: FromAudio[]) => void;
  const ended = new Promise<FromAudio[]>((resolve) => (done = resolve));
  const listener = (msg: FromAudio) => {
    events.push(msg);
    if (msg.ev === "ended" || msg.ev === "error") done(events);
  };
  const lane = vadOnly ? pool.open(options, listener) : await pool.openRecognizer(options, listener);
  for (const f of audio) lane.audio(f);
  extra(lane);
  lane.end();
  return ended;
}

describe.skipIf(!localSttAvailable)("audio worker: router VAD and PocketSphinx", () => {
  const pieces = [silence(800), speak("Thank you very much for your help."), silence(1200), speak("I would like a cup of coffee."), silence(900)];
  const truth = spokenSpans(pieces);

  test("VAD turns fall within 150 ms of the spoken truth; auto commit finalizes each utterance", async () => {
    const events = await run({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: true }, frames(concat(pieces)));
    const starts = events.filter((e) => e.ev === "speech_started").map((e) => (e as { atMs: number }).atMs);
    const ends = events.filter((e) => e.ev === "speech_ended").map((e) => (e as { atMs: number }).atMs);
    expect(starts.length).toBe(2);
    expect(ends.length).toBe(2);
    truth.forEach(([s, e], i) => {
      expect(Math.abs(starts[i] - s)).toBeLessThanOrEqual(150);
      expect(Math.abs(ends[i] - e)).toBeLessThanOrEqual(150);
    });
    const finals = events.filter((e) => e.ev === "final") as Extract<FromAudio, { ev: "final" }>[];
    expect(finals.map((f) => f.text)).toEqual(["thank you very much for your help", "i would like a cup of coffee"]);
    expect(Math.abs(finals[1].startMs - ends[0])).toBeLessThanOrEqual(600); // the second utterance starts where the first was committed
    // each final precedes its committed end, and interims came before the first final
    expect(events.findIndex((e) => e.ev === "final")).toBeLessThan(events.findIndex((e) => e.ev === "speech_ended"));
    expect(events.findIndex((e) => e.ev === "interim")).toBeLessThan(events.findIndex((e) => e.ev === "final"));
    expect(events.at(-1)).toMatchObject({ ev: "ended", audioMs: Math.round((concat(pieces).length / 16000) * 1000) });
  }, 30_000);

  test("manual commit and clear: only what the client commits is finalized", async () => {
    const first = frames(speak("Good morning everyone."));
    const second = frames(speak("This part is cleared."));
    const events = await run({ rate: 16000, autoCommit: false, interim: false }, [], (lane) => {
      for (const f of first) lane.audio(f);
      lane.commit();
      for (const f of second) lane.audio(f);
      lane.clear();
    });
    expect(events.map((e) => e.ev)).toEqual(["opened", "final", "committed", "cleared", "ended"]);
    expect((events[1] as { text: string }).text).toContain("good morning");
  }, 30_000);

  test("a VAD-only session (an upstream recognizer) reports turns without transcripts", async () => {
    const events = await run({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: false }, frames(concat(pieces)), undefined, true);
    expect(events.filter((e) => e.ev === "speech_started").length).toBe(2);
    expect(events.some((e) => e.ev === "final" || e.ev === "interim")).toBe(false);
    expect(events.filter((e) => e.ev === "speech_ended").every((e) => (e as { committed: boolean }).committed === false)).toBe(true);
    expect(events.some((e) => e.ev === "vad_score")).toBe(false); // not asked for
  }, 30_000);

  test("scores, when asked: one message per 256 ms of audio, high in speech and low in silence", async () => {
    const events = await run({ rate: 16000, vad: DEFAULT_VAD, scores: true, autoCommit: true, interim: false }, frames(concat(pieces)), undefined, true);
    const scores = events.filter((e) => e.ev === "vad_score") as Extract<FromAudio, { ev: "vad_score" }>[];
    expect(scores.length).toBe(Math.floor(concat(pieces).length / 16 / 256));
    expect(scores.map((x) => x.atMs)).toEqual(scores.map((_, i) => (i + 1) * 256));
    const { speech, quiet } = windowsBySpeech(
      truth,
      scores.map((x) => x.atMs),
      256,
    );
    expect(speech.length).toBeGreaterThanOrEqual(8);
    expect(quiet.length).toBeGreaterThanOrEqual(8);
    for (const i of speech) expect(scores[i].score).toBeGreaterThan(0.5);
    for (const i of quiet) expect(scores[i].score).toBeLessThan(0.3);
    for (const x of scores) expect(x.score).toBeWithin(0, 1.0000001);
  }, 30_000);

  test("frames owning their buffer are transferred, not copied", () => {
    const frame = new Uint8Array(640);
    const lane = pool.open({ rate: 16000, autoCommit: false, interim: false }, () => {});
    lane.audio(frame);
    expect(frame.buffer.byteLength).toBe(0); // detached: it moved to the worker
    lane.drop();
  });
});

describe.skipIf(!localSttAvailable)("a dead audio worker", () => {
  test("fails only its own sessions; the others go on, and the pool replaces it", async () => {
    const local = new AudioPool(2, { perWorker: 2, queue: 0, waitMs: 0 });
    try {
      const events: Record<number, string[]> = { 0: [], 1: [] };
      const lanes = await Promise.all([0, 1].map((i) => local.openRecognizer({ rate: 16000, autoCommit: false, interim: false }, (m) => events[i].push(m.ev))));
      await Bun.sleep(600); // both opened, one per worker (least loaded)
      await local.workers[0].terminate();
      await Bun.sleep(20);
      expect(events[0].at(-1)).toBe("error");
      // While the dead worker is being replaced, new sessions go to the live one.
      const got: string[] = [];
      let done!: () => void;
      const ended = new Promise<void>((resolve) => (done = resolve));
      const lane = await local.openRecognizer({ rate: 16000, autoCommit: false, interim: false }, (m) => {
        got.push(m.ev === "final" ? `final:${(m as { text: string }).text}` : m.ev);
        if (m.ev === "ended") done();
      });
      for (const f of frames(speak("Good morning everyone."))) lane.audio(f);
      lane.end();
      await ended;
      const survivor = got;
      expect(survivor).toContain("final:good morning everyone");
      lanes[1].end();
      await Bun.sleep(100);
      expect(events[1]).toContain("ended");
      expect(events[1]).not.toContain("error");
    } finally {
      await local.close();
    }
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("decoders per worker", () => {
  const options = { rate: 16000, autoCommit: false, interim: false };

  test("recognition sessions beyond them wait in the queue, and are refused when it is full or the wait runs out", async () => {
    const local = new AudioPool(1, { perWorker: 1, queue: 1, waitMs: 300 });
    try {
      const first = await local.openRecognizer(options, () => {});
      const waiting = local.openRecognizer(options, () => {});
      expect(local.recognizersFull).toBe(true);
      expect(await local.openRecognizer(options, () => {}).catch((e) => e)).toBeInstanceOf(NoSeat); // the queue is full
      expect(await waiting.catch((e) => e)).toBeInstanceOf(NoSeat); // its wait ran out
      first.drop();
      expect(local.recognizersFull).toBe(false);
      (await local.openRecognizer(options, () => {})).drop();
    } finally {
      await local.close();
    }
  }, 30_000);

  test("a dead worker's decoders come back with its replacement", async () => {
    const local = new AudioPool(2, { perWorker: 1, queue: 1, waitMs: 20_000 });
    try {
      const events: string[][] = [[], []];
      await Promise.all([0, 1].map((i) => local.openRecognizer(options, (m) => events[i].push(m.ev))));
      const got: string[] = [];
      let done!: () => void;
      const ended = new Promise<void>((resolve) => (done = resolve));
      // Every decoder is taken: this one waits.
      const waiting = local.openRecognizer(options, (m) => {
        got.push(m.ev === "final" ? `final:${(m as { text: string }).text}` : m.ev);
        if (m.ev === "ended") done();
      });
      await Bun.sleep(300);
      await local.workers[0].terminate();
      await Bun.sleep(20);
      expect(events.flat()).toContain("error"); // the dead worker's session failed
      const lane = await waiting; // seated on the replacement
      for (const f of frames(speak("Good morning everyone."))) lane.audio(f);
      lane.end();
      await ended;
      expect(got).toContain("final:good morning everyone");
    } finally {
      await local.close();
    }
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("closing the pool", () => {
  test("while the VAD is busy: the workers finish what they hold and exit; the process lives on", async () => {
    const local = new AudioPool(2, DECODERS);
    const lanes = [0, 1, 2, 3].map(() => local.open({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: false }, () => {}));
    for (const lane of lanes) for (const f of frames(speak("Audio queued for the voice activity detector."))) lane.audio(f);
    const exits = local.workers.map((w) => new Promise<number>((resolve) => w.once("exit", resolve)));
    await local.close();
    expect(await Promise.all(exits)).toEqual([0, 0]); // exited by themselves, not terminated mid-inference
  });
});
