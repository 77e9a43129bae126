import { CLOSE } from "../../errors.ts";
import { ttsEventQueue } from "../audio-backlog.ts";
import { pacedText, TEXT_WINDOW } from "../paced-text.ts";
import type { TtsEvent, TtsStream } from "../types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket } from "../upstream-ws.ts";
import { joinText, TurnBatch } from "../../util/turn-batch.ts";

/**
 * Deepgram takes at most 20 `Flush` messages a minute and ignores the rest: a wider pacing
 * window keeps its own flushes well under that even when Aura runs far ahead of real time.
 */
const PACING_WINDOW = 2 * TEXT_WINDOW;

/**
 * Aura's streaming WebSocket (`/v1/speak`): text goes out as `Speak` as it arrives (Deepgram
 * chunks it itself), binary frames are the audio. Each `Flush` is answered by `Flushed`, in
 * order; only those of our `flush()` become `flushed` events (`end()` flushes too).
 */
export async function openAuraWebSocket(options: HttpProviderOptions, query: URLSearchParams, rate: number): Promise<TtsStream> {
  query.set("encoding", "linear16");
  query.set("sample_rate", String(rate));
  const url = `${options.baseUrl.replace(/^http/, "ws")}/v1/speak?${query}`;
  const ws = await openUpstreamSocket("deepgram", url, { headers: options.apiKey ? { Authorization: `Token ${options.apiKey}` } : {} });
  const flushes: boolean[] = []; // per Flush sent, oldest first: whether it answers our flush()
  let ending = false;
  const stream = new JsonSocketStream<TtsEvent>(
    "deepgram",
    ws,
    options.idleTimeoutMs,
    {
      // A close before our Close is a failure, not the end of the speech.
      normalClose: (code) => code === CLOSE.normal && ending,
      onBinary: (audio, s) => s.push({ type: "audio", audio }),
      onJson(ev, s) {
        if (ev.type !== "Flushed") return; // Metadata, Cleared, Warning, and types to come
        if (flushes.shift()) s.push({ type: "flushed" });
        if (flushes.length) return;
        // `Close` halts Deepgram at once: it goes only when the end's own flush has been spoken.
        if (ending) s.send('{"type":"Close"}');
        else s.answered();
      },
    },
    ttsEventQueue("deepgram"),
  );
  // Tokens that arrive together (an application's answer streamed in) go out as one Speak.
  const speak = new TurnBatch<string>((text) => stream.send(JSON.stringify({ type: "Speak", text })), joinText, TEXT_WINDOW);
  const flush = (ours: boolean) => {
    speak.flush();
    flushes.push(ours);
    stream.send('{"type":"Flush"}');
    stream.expectAnswer();
  };
  return pacedText(
    {
      audioFormat: { encoding: "pcm_s16le", sampleRate: rate, channels: 1 },
      write: (text) => {
        if (text) speak.push(text);
      },
      flush: () => flush(true),
      end: () => {
        if (ending) return;
        flush(false);
        ending = true;
      },
      cancel: () => {
        speak.drop();
        stream.send('{"type":"Clear"}');
        stream.cancel();
      },
      [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
    },
    PACING_WINDOW,
  );
}
