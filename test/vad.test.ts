import { describe, expect, test } from "bun:test";
import { disableOnnxTelemetry } from "../src/audio/onnx-telemetry.ts";
import { loadOnnxRuntime } from "../src/audio/onnxruntime.ts";
import { DEFAULT_VAD, loadSilero, SileroVad } from "../src/audio/vad.ts";
import { concat, silence, speak, spokenSpans } from "./helpers/speech.ts";

disableOnnxTelemetry();
const models = await loadSilero(await loadOnnxRuntime(undefined));
const pieces = [silence(700), speak("Thank you very much for your help."), silence(1000), speak("I would like a cup of coffee."), silence(800)];
const pcm = concat(pieces);
const truth = spokenSpans(pieces);

async function run(vad: SileroVad, samples: Int16Array, chunk: number) {
  const events = [];
  for (let i = 0; i < samples.length; i += chunk) events.push(...(await vad.push(samples.subarray(i, i + chunk))));
  return events;
}

function resample(x: Int16Array, rate: number): Int16Array {
  const ratio = rate / 16000;
  return Int16Array.from({ length: Math.floor(x.length * ratio) }, (_, i) => x[Math.min(x.length - 1, Math.floor(i / ratio))]);
}

describe("router VAD (Silero)", () => {
  for (const rate of [8000, 16000, 24000, 48000]) {
    test(`${rate} Hz: two utterances, each boundary within 150 ms of the truth`, async () => {
      const events = await run(new SileroVad(models, rate), resample(pcm, rate), rate / 50);
      expect(events.map((e) => e.type)).toEqual(["started", "end", "started", "end"]);
      truth.forEach(([start, end], i) => {
        expect(Math.abs(events[2 * i].atMs - start)).toBeLessThanOrEqual(150);
        expect(Math.abs(events[2 * i + 1].atMs - end)).toBeLessThanOrEqual(150);
      });
    });
  }

  test("batched inference decides exactly as one stream alone, whatever the frame sizes", async () => {
    const alone = await run(new SileroVad(models, 16000), pcm, 320);
    const together = await Promise.all(Array.from({ length: 12 }, (_, i) => run(new SileroVad(models, 16000), pcm, [160, 320, 1000, 4096][i % 4])));
    for (const events of together) expect(events).toEqual(alone);
  });

  test("scores: the highest probability per 8 frames (256 ms), the same whatever the chunk sizes; the turns are as without them", async () => {
    const plain = await run(new SileroVad(models, 16000), pcm, 320);
    const [a, b] = await Promise.all([run(new SileroVad(models, 16000, DEFAULT_VAD, 250), pcm, 320), run(new SileroVad(models, 16000, DEFAULT_VAD, 250), pcm, 4096)]);
    expect(b).toEqual(a);
    expect(plain).toEqual(a.filter((e) => e.type !== "score"));
    const scores = a.filter((e) => e.type === "score");
    expect(scores.map((e) => e.atMs)).toEqual(Array.from({ length: Math.floor(pcm.length / 512 / 8) }, (_, i) => (i + 1) * 256));
  });

  test("tuning: a longer silence_duration_ms keeps a short pause inside one utterance", async () => {
    const events = await run(new SileroVad(models, 16000, { speechThreshold: 0.5, minSpeechDurationMs: 250, minSilenceDurationMs: 100, silenceDurationMs: 1500 }), pcm, 320);
    // The 1 s pause does not end the utterance, nor do the last 0.8 s of silence.
    expect(events.map((e) => e.type)).toEqual(["started"]);
  });
});
