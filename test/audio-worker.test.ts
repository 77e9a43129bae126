import { afterAll, describe, expect, test } from "bun:test";
import { DEFAULT_VAD } from "../src/audio/vad.ts";
import { AudioPool } from "../workers/audio-pool.ts";
import type { FromAudio } from "../workers/audio-protocol.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { concat, frames, silence, speak, spokenSpans } from "./helpers/speech.ts";

const pool = new AudioPool(2);
afterAll(() => pool.close());

function run(options: Parameters<AudioPool["open"]>[0], audio: Uint8Array[], extra: (lane: ReturnType<AudioPool["open"]>) => void = () => {}) {
  return new Promise<FromAudio[]>((resolve) => {
    const events: FromAudio[] = [];
    const lane = pool.open(options, (msg) => {
      events.push(msg);
      if (msg.ev === "ended" || msg.ev === "error") resolve(events);
    });
    for (const f of audio) lane.audio(f);
    extra(lane);
    lane.end();
  });
}

describe.skipIf(!localSttAvailable)("audio worker: router VAD and PocketSphinx", () => {
  const pieces = [silence(800), speak("Thank you very much for your help."), silence(1200), speak("I would like a cup of coffee."), silence(900)];
  const truth = spokenSpans(pieces);

  test("VAD turns fall within 150 ms of the spoken truth; auto commit finalizes each utterance", async () => {
    const events = await run({ rate: 16000, vad: DEFAULT_VAD, recognizer: "pocketsphinx", autoCommit: true, interim: true }, frames(concat(pieces)));
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
  });

  test("manual commit and clear: only what the client commits is finalized", async () => {
    const first = frames(speak("Good morning everyone."));
    const second = frames(speak("This part is cleared."));
    const events = await run({ rate: 16000, recognizer: "pocketsphinx", autoCommit: false, interim: false }, [], (lane) => {
      for (const f of first) lane.audio(f);
      lane.commit();
      for (const f of second) lane.audio(f);
      lane.clear();
    });
    expect(events.map((e) => e.ev)).toEqual(["opened", "final", "committed", "cleared", "ended"]);
    expect((events[1] as { text: string }).text).toContain("good morning");
  });

  test("a VAD-only session (an upstream recognizer) reports turns without transcripts", async () => {
    const events = await run({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: false }, frames(concat(pieces)));
    expect(events.filter((e) => e.ev === "speech_started").length).toBe(2);
    expect(events.some((e) => e.ev === "final" || e.ev === "interim")).toBe(false);
    expect(events.filter((e) => e.ev === "speech_ended").every((e) => (e as { committed: boolean }).committed === false)).toBe(true);
  });

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
    const local = new AudioPool(2);
    try {
      const events: Record<number, string[]> = { 0: [], 1: [] };
      const lanes = [0, 1].map((i) => local.open({ rate: 16000, recognizer: "pocketsphinx", autoCommit: false, interim: false }, (m) => events[i].push(m.ev)));
      await Bun.sleep(600); // both opened, one per worker (least loaded)
      await local.workers[0].terminate();
      await Bun.sleep(20);
      expect(events[0].at(-1)).toBe("error");
      // While the dead worker is being replaced, new sessions go to the live one.
      const survivor = await new Promise<string[]>((resolve) => {
        const got: string[] = [];
        const lane = local.open({ rate: 16000, recognizer: "pocketsphinx", autoCommit: false, interim: false }, (m) => {
          got.push(m.ev === "final" ? `final:${(m as { text: string }).text}` : m.ev);
          if (m.ev === "ended") resolve(got);
        });
        for (const f of frames(speak("Good morning everyone."))) lane.audio(f);
        lane.end();
      });
      expect(survivor).toContain("final:good morning everyone");
      lanes[1].end();
      await Bun.sleep(100);
      expect(events[1]).toContain("ended");
      expect(events[1]).not.toContain("error");
    } finally {
      await local.close();
    }
  });
});

describe.skipIf(!localSttAvailable)("closing the pool", () => {
  test("while the VAD is busy: the workers finish what they hold and exit; the process lives on", async () => {
    const local = new AudioPool(2);
    const lanes = [0, 1, 2, 3].map(() => local.open({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: false }, () => {}));
    for (const lane of lanes) for (const f of frames(speak("Audio queued for the voice activity detector."))) lane.audio(f);
    const exits = local.workers.map((w) => new Promise<number>((resolve) => w.once("exit", resolve)));
    await local.close();
    expect(await Promise.all(exits)).toEqual([0, 0]); // exited by themselves, not terminated mid-inference
  });
});
