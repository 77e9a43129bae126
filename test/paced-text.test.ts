import { describe, expect, test } from "bun:test";
import { ttsEventQueue, AUDIO_BACKLOG_CAP_BYTES } from "../src/providers/audio-backlog.ts";
import { pacedText } from "../src/providers/paced-text.ts";
import { takeSentences, MAX_UTTERANCE } from "../src/providers/sentences.ts";
import { ProviderError } from "../src/errors.ts";
import type { TtsEvent, TtsStream } from "../src/providers/types.ts";

// The text window that paces a WebSocket upstream, against an upstream double that records what it
// was sent and answers each flush at once, as an upstream does whether or not anyone reads.

const WINDOW = 100;
const SENTENCE = "A sentence of exactly forty characters. "; // 40
const AUDIO: TtsEvent = { type: "audio", audio: new Uint8Array(2) };

function upstream() {
  const queue = ttsEventQueue("double");
  const sent: string[] = []; // texts, "<flush>", "<end>"
  const inner: TtsStream = {
    audioFormat: { encoding: "pcm_s16le", sampleRate: 16000, channels: 1 },
    write: (text) => void sent.push(text),
    flush: () => {
      sent.push("<flush>");
      queue.push(AUDIO);
      queue.push({ type: "flushed" });
    },
    end: () => {
      sent.push("<end>");
      queue.push(AUDIO);
      queue.end();
    },
    cancel: () => queue.end(),
    [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
  };
  const text = () => sent.filter((s) => !s.startsWith("<")).join("");
  return { inner, sent, text };
}

describe("pacedText", () => {
  test("text within the window goes through as it comes, with no flush of ours", () => {
    const up = upstream();
    const paced = pacedText(up.inner, WINDOW);
    paced.write("Hello ");
    paced.write("there. ");
    paced.flush();
    paced.write("More.");
    paced.end();
    expect(up.sent).toEqual(["Hello ", "there. ", "<flush>", "More.", "<end>"]);
  });

  test("past the window the piece ends at a sentence end and is flushed; more goes only once the client has read up to it", async () => {
    const up = upstream();
    const paced = pacedText(up.inner, WINDOW);
    const it = paced[Symbol.asyncIterator]();
    const text = SENTENCE.repeat(10); // 400 characters
    paced.write(text);
    paced.flush(); // the caller's
    paced.end();
    // 100 fit, the piece runs on to the sentence end at 120, then our flush; its audio arrives, but unread.
    expect(up.sent).toEqual([SENTENCE.repeat(3), "<flush>"]);
    await Bun.sleep(5);
    expect(up.sent.length).toBe(2);
    expect(paced.given).toBe(120); // what a client leaving now pays for, not the 400 written
    // Reading the audio and our acknowledgement (not passed on) lets the next piece go.
    expect((await it.next()).value).toEqual(AUDIO);
    expect(up.sent.length).toBe(2);
    expect((await it.next()).value).toEqual(AUDIO);
    expect(up.sent.slice(2, 4)).toEqual([SENTENCE.repeat(3), "<flush>"]);

    const events: TtsEvent[] = [];
    for (let step = await it.next(); !step.done; step = await it.next()) events.push(step.value);
    expect(up.text()).toBe(text);
    expect(paced.given).toBe(text.length);
    // The caller's flush comes after all its text, then the end; only its acknowledgement is passed on.
    expect(up.sent.slice(-3)).toEqual([SENTENCE, "<flush>", "<end>"]);
    expect(events.filter((e) => e.type === "flushed")).toHaveLength(1);
    expect(events.slice(-3)).toEqual([AUDIO, { type: "flushed" }, AUDIO]);
  });

  test("run-on text is cut at white space, and anywhere only when nothing else is in flight", () => {
    const up = upstream();
    pacedText(up.inner, WINDOW).write("word ".repeat(100));
    expect(up.sent[0].length).toBeLessThanOrEqual(2 * WINDOW);
    expect(up.sent[0].endsWith("word")).toBe(true);
    expect(up.sent[1]).toBe("<flush>");

    const up2 = upstream();
    pacedText(up2.inner, WINDOW).write("x".repeat(500));
    expect(up2.sent).toEqual(["x".repeat(2 * WINDOW), "<flush>"]);
  });

  test("cancel drops the text still waiting", async () => {
    const up = upstream();
    const paced = pacedText(up.inner, WINDOW);
    const it = paced[Symbol.asyncIterator]();
    paced.write(SENTENCE.repeat(10));
    paced.cancel();
    for (let step = await it.next(); !step.done; step = await it.next());
    expect(up.text()).toBe(SENTENCE.repeat(3));
    expect(paced.given).toBe(120);
  });

  test("what was given counts code points, and defers to an upstream that holds text back itself", () => {
    const up = upstream();
    const paced = pacedText(up.inner, WINDOW);
    paced.write("Voilà 👋. ");
    expect(paced.given).toBe(9);
    const holding = upstream();
    expect(pacedText({ ...holding.inner, given: 3 }, WINDOW).given).toBe(3);
  });
});

describe("a provider stream's backlog", () => {
  test("audio pushed past the cap fails the stream (not retryable) instead of growing", async () => {
    const queue = ttsEventQueue("upstream");
    const chunk = new Uint8Array(1024 * 1024);
    for (let i = 0; i <= AUDIO_BACKLOG_CAP_BYTES / chunk.byteLength; i++) queue.push({ type: "audio", audio: chunk });
    expect(queue.unread).toBe(AUDIO_BACKLOG_CAP_BYTES + chunk.byteLength);
    queue.push({ type: "audio", audio: chunk }); // ignored: the queue has failed
    let read = 0;
    const error = await (async () => {
      try {
        for await (const _ of queue) read++;
      } catch (err) {
        return err as ProviderError;
      }
    })();
    expect(read).toBe(AUDIO_BACKLOG_CAP_BYTES / chunk.byteLength + 1);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error!.retryable).toBe(false);
    expect(error!.message).toBe("upstream sent more than 16 MiB of audio ahead of the client");
  });

  test("a run-on text becomes utterances of at most MAX_UTTERANCE, cut at white space", () => {
    const text = "word ".repeat(1000);
    const { rest, ...cut } = takeSentences(text);
    const sentences = cut.sentences.map((s) => s.text);
    for (const s of sentences) expect(s.length).toBeLessThanOrEqual(MAX_UTTERANCE);
    expect(rest.length).toBeLessThanOrEqual(MAX_UTTERANCE);
    expect([...sentences, rest.trim()].filter(Boolean).join(" ")).toBe(text.trim());
  });
});
