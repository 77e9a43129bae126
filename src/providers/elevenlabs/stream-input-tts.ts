import { mp3Clock, sampleClock } from "../../audio/audio-clock.ts";
import { codePoints } from "../../util/code-points.ts";
import { ttsEventQueue } from "../audio-backlog.ts";
import { pacedText } from "../paced-text.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, CharacterTimes, TtsEvent, TtsStream, TtsStreamRequest } from "../types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket } from "../upstream-ws.ts";
import type { WireJson } from "../wire-json.ts";
import { frameTimes } from "./wire-alignment.ts";
import { booleanOption, chunkLengthSchedule, voiceSettings } from "./options.ts";

// ElevenLabs' input-streaming WebSocket, in its multi-context form (`multi-stream-input`). The
// single-context `stream-input` acknowledges nothing until the socket ends, so it cannot say when a
// flush's audio is complete; with contexts it can: each stretch of text up to a flush is a context,
// flushed and closed there, and ElevenLabs answers `isFinal` for that context once its audio is
// out. Contexts may be generated side by side, so audio of a later context waits until the ones
// before it are final: audio leaves in the order the text came. Asked for timings, the socket is
// opened with `sync_alignment=true` and each frame's (timed from the frame's own start) goes out
// just before its audio, on the stream's timeline.

/** Provider options passed through as query parameters. */
const QUERY_OPTIONS = ["auto_mode", "enable_logging", "enable_ssml_parsing", "inactivity_timeout", "language_code", "apply_text_normalization"] as const;

/** An audio frame of a context, with its timings when asked for. */
type Frame = { audio: Uint8Array; alignment?: WireJson; normalized?: WireJson };
/** `initSpace`: the context opened with the customary " ", which ElevenLabs times as text (it is not the session's). */
type Entry = { context: string; frames: Frame[]; final: boolean; initSpace: boolean } | { marker: "flushed" | "end" };
type Waiting = { kind: "text"; text: string } | { kind: "flush" } | { kind: "end" };

/** Timings less a leading space: the customary " " a context opens with. */
function withoutInitSpace(times: CharacterTimes): CharacterTimes {
  if (times.chars[0] !== " ") return times;
  return { chars: times.chars.slice(1), starts: times.starts.slice(1), ends: times.ends.slice(1) };
}

/**
 * ElevenLabs refuses a sixth context per socket (closing it with 1008) while five are open or
 * still being generated: a new turn's text waits until one of them is final.
 */
const MAX_CONTEXTS = 5;

export async function openStreamInput(options: HttpProviderOptions, req: TtsStreamRequest, voice: string, format: AudioFormat, outputFormat: string): Promise<TtsStream> {
  const settings = voiceSettings(req.speed, req.options);
  const schedule = chunkLengthSchedule(req.options.chunk_length_schedule);
  const tryTrigger = booleanOption(req.options, "try_trigger_generation");
  // ElevenLabs closes a socket that gets no text for `inactivity_timeout` seconds (20 by default),
  // which a session idle between turns would hit: an empty text to the open context resets it.
  const inactivitySeconds = Number(req.options.inactivity_timeout ?? 20);
  if (!Number.isInteger(inactivitySeconds) || inactivitySeconds < 1 || inactivitySeconds > 180) {
    throw new ProviderError(`elevenlabs option inactivity_timeout must be a whole number of seconds from 1 to 180, not ${JSON.stringify(req.options.inactivity_timeout)}`, false);
  }
  const query = new URLSearchParams({ model_id: req.model, output_format: outputFormat });
  for (const name of QUERY_OPTIONS) if (req.options[name] !== undefined) query.set(name, req.options[name]);
  if (req.alignment) query.set("sync_alignment", "true");
  if (req.ssml) query.set("enable_ssml_parsing", "true");
  const url = `${options.baseUrl.replace(/^http/, "ws")}/v1/text-to-speech/${encodeURIComponent(voice)}/multi-stream-input?${query}`;
  const ws = await openUpstreamSocket("elevenlabs", url, { headers: options.apiKey ? { "xi-api-key": options.apiKey } : {} });

  const contextSetup = { ...(settings ? { voice_settings: settings } : {}), ...(schedule ? { generation_config: { chunk_length_schedule: schedule } } : {}) };
  /** Text sent or flushed and not yet final, in order, with the flush and end markers between. */
  const entries: Entry[] = [];
  let contexts = 1;
  /** The context initialised with the socket, until text goes to it. */
  let initialised: string | undefined = "1";
  /** The context text is going to now. */
  let speaking: string | undefined;
  let ending = false;
  /** Commands waiting for a context to finish (see MAX_CONTEXTS), in order. */
  const waiting: Waiting[] = [];
  /** Characters sent to ElevenLabs (text waiting for a context is not). */
  let given = 0;
  const unfinished = () => entries.filter((e) => "context" in e && !e.final).length;
  /** Where the stream's audio stands, for the frames' timings. */
  const clock = format.encoding === "mp3" ? mp3Clock() : sampleClock(format.sampleRate, 2);
  let played = 0;

  // A flush is answered once synthesis starts: like the time to an HTTP response, it gets the connect timeout.
  const answerMs = Math.max(options.connectTimeoutMs, options.idleTimeoutMs);
  const stream = new JsonSocketStream<TtsEvent>(
    "elevenlabs",
    ws,
    answerMs,
    {
      keepAlive: {
        everyMs: (inactivitySeconds * 1000) / 3,
        frame: () => {
          const context = speaking ?? initialised;
          return context === undefined ? undefined : JSON.stringify({ context_id: context, text: "" });
        },
      },
      onJson(ev) {
        const id = ev.contextId ?? ev.context_id;
        const entry = entries.find((e): e is Extract<Entry, { context: string }> => "context" in e && (id === undefined || e.context === id));
        if (!entry) return;
        if (typeof ev.audio === "string" && ev.audio) {
          entry.frames.push({ audio: Buffer.from(ev.audio, "base64"), ...(req.alignment ? { alignment: ev.alignment, normalized: ev.normalizedAlignment } : {}) });
        }
        if (ev.isFinal ?? ev.is_final) entry.final = true;
        drain();
      },
    },
    ttsEventQueue("elevenlabs"),
  );

  /** Emits what is due: the head context's audio, and every marker whose text is all spoken. */
  function drain(): void {
    while (entries.length) {
      const head = entries[0];
      if ("marker" in head) {
        entries.shift();
        if (head.marker === "flushed") stream.push({ type: "flushed" });
        else stream.send('{"close_socket":true}'); // ElevenLabs closes the socket (1000) after this
        continue;
      }
      for (const frame of head.frames.splice(0)) push(frame, head);
      if (!head.final) break;
      entries.shift();
    }
    resume(); // a context that finished makes room for a waiting turn
    if (entries.length || ending) return;
    stream.answered();
    // All spoken and idle: a context opens for the next turn, so that the keep-alive has one to
    // address (opened only now, it never adds to the contexts ElevenLabs is generating).
    if (speaking === undefined && initialised === undefined) {
      initialised = String(++contexts);
      stream.send(JSON.stringify({ text: " ", ...contextSetup, context_id: initialised }));
    }
  }

  /** A frame's timings (if any), then its audio. */
  function push({ audio, alignment, normalized }: Frame, entry: Extract<Entry, { context: string }>): void {
    const times = frameTimes(alignment, played);
    if (times) {
      const ours = entry.initSpace ? withoutInitSpace : (t: CharacterTimes) => t;
      entry.initSpace = false;
      const normalizedTimes = frameTimes(normalized, played);
      stream.push({ type: "alignment", alignment: ours(times), ...(normalizedTimes ? { normalized: ours(normalizedTimes) } : {}) });
    }
    stream.push({ type: "audio", audio });
    played = clock.advance(audio);
  }

  /** Asks for the speaking context's audio now and closes it; `isFinal` answers when it is all out. */
  function closeContext(marker: "flushed" | "end"): void {
    if (speaking) {
      stream.send(JSON.stringify({ context_id: speaking, text: "", flush: true }));
      stream.send(JSON.stringify({ context_id: speaking, close_context: true }));
      speaking = undefined;
    }
    entries.push({ marker });
    stream.expectAnswer();
    drain();
  }

  stream.send(JSON.stringify({ text: " ", ...contextSetup, context_id: initialised }));
  function write(text: string): void {
    const frame: Record<string, unknown> = { text };
    if (!speaking) {
      const initSpace = initialised !== undefined;
      speaking = initialised ?? String(++contexts);
      if (!initSpace) Object.assign(frame, contextSetup);
      initialised = undefined;
      entries.push({ context: speaking, frames: [], final: false, initSpace });
    }
    if (tryTrigger !== undefined) frame.try_trigger_generation = tryTrigger;
    stream.send(JSON.stringify({ ...frame, context_id: speaking }));
    given += codePoints(text);
  }

  /** Runs the commands that waited for a context to finish, as far as there is room now. */
  function resume(): void {
    while (waiting.length) {
      const next = waiting[0];
      if (next.kind === "text" && !speaking && !initialised && unfinished() >= MAX_CONTEXTS) return;
      waiting.shift();
      if (next.kind === "text") write(next.text);
      else closeContext(next.kind === "flush" ? "flushed" : "end");
    }
  }

  /** Commands keep their order: once one waits for room, those after it wait too. */
  function run(command: Waiting): void {
    waiting.push(command);
    resume();
  }

  return pacedText({
    audioFormat: format,
    get given() {
      return given;
    },
    write(text) {
      if (text && !ending) run({ kind: "text", text });
    },
    flush() {
      if (!ending) run({ kind: "flush" });
    },
    end() {
      if (ending) return;
      ending = true;
      run({ kind: "end" });
    },
    cancel: () => stream.cancel(),
    [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
  });
}
