import { expect, test } from "bun:test";
import { AUDIO_BACKLOG_BYTES } from "../src/providers/audio-backlog.ts";
import { UtteranceTtsStream } from "../src/providers/utterance-stream.ts";

// A slow client must not make the router read a whole response ahead of it: the upstream body is
// read only as fast as the audio is taken (a bounded read-ahead), and that wait is not mistaken
// for the upstream going silent.

test("an upstream body is read ahead of a client that takes nothing only up to a bound, then resumes without a false 'silent'", async () => {
  let pulled = 0;
  const total = (4 * AUDIO_BACKLOG_BYTES) / 1024;
  const response = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled === total) return controller.close();
          pulled++;
          controller.enqueue(new Uint8Array(1024));
        },
      }),
      { headers: { "content-type": "audio/mpeg" } },
    );
  const stream = new UtteranceTtsStream({ encoding: "mp3", sampleRate: 44100, channels: 1 }, "test", 100, async () => response());
  stream.write("One sentence.");
  stream.end();
  const iterator = stream[Symbol.asyncIterator]();
  await iterator.next(); // the first chunk, then the client pauses
  await Bun.sleep(300); // longer than the 100 ms idle timeout
  // The backlog bound, and what Bun's body reader takes ahead of us.
  expect(pulled * 1024).toBeLessThan(AUDIO_BACKLOG_BYTES + 64 * 1024);
  let chunks = 1;
  for (let step = await iterator.next(); !step.done; step = await iterator.next()) if (step.value.type === "audio") chunks++;
  expect(chunks).toBe(total);
});

test("only the utterances requested count as given: the rest waits for the client to read", async () => {
  const requested: string[] = [];
  const stream = new UtteranceTtsStream({ encoding: "mp3", sampleRate: 44100, channels: 1 }, "test", 1000, async (input) => {
    requested.push(input);
    return new Response(new Uint8Array(2 * AUDIO_BACKLOG_BYTES), { headers: { "content-type": "audio/mpeg" } });
  });
  const text = "First one.  Second 👋 one. Third one. Fourth";
  stream.write(text);
  stream.end();
  const iterator = stream[Symbol.asyncIterator]();
  await iterator.next(); // the first audio, then the client pauses
  await Bun.sleep(100);
  expect(requested).toEqual(["First one."]);
  expect(stream.given).toBe("First one.  ".length);
  for (let step = await iterator.next(); !step.done; step = await iterator.next());
  expect(requested).toEqual(["First one.", "Second 👋 one.", "Third one.", "Fourth"]);
  expect(stream.given).toBe([...text].length);
});
