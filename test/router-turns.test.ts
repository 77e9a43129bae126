import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_VAD } from "../src/audio/vad.ts";
import type { CatalogueData } from "../src/catalogue/catalogue.ts";
import { ProviderError } from "../src/errors.ts";
import type { SttEvent, SttFamily, SttProvider, SttStream, SttStreamRequest } from "../src/providers/stt-types.ts";
import { withRouterTurns, type VadLanes } from "../src/sessions/router-turns.ts";
import { AsyncQueue } from "../src/util/async-queue.ts";
import { AudioPool } from "../src/pools/audio-pool.ts";
import type { FromAudio } from "../workers/audio-protocol.ts";
import type { TestServer } from "./helpers/server.ts";
import { startTestServer } from "./helpers/server.ts";
import { oneBindingCatalogue, streamingSttBinding } from "./fakes/one-binding-catalogue.ts";
import { concat, frames, silence, speak, spokenSpans } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// The router's turns around a recognizer of any family without a turn detector: a trivial stream
// that knows nothing of VADs or pools, wrapped by `withRouterTurns`, against scripted VAD lanes
// (the orderings), the real audio workers (real speech), and through /v1/stt (the session wraps
// it by its family's data alone).

/**
 * A recognizer with a commit frame and no turn detector: it keeps the frames it is sent, and
 * answers a commit with a final transcript of the bytes since the last one, then `committed`
 * (a clear with `cleared`), each when `answer()` is called or soon after with `answerAt: "soon"`.
 * Like a real recognizer, it ends only once it has answered what it owes.
 */
class TrivialStream implements SttStream {
  readonly frames: Uint8Array[] = [];
  readonly calls: string[] = [];
  readonly bufferedAmount = 0;
  cancelled = false;
  private readonly queue = new AsyncQueue<SttEvent>();
  private readonly owed: ("commit" | "clear")[] = [];
  private bytes = 0;
  private finalAt = 0;
  private ending = false;

  constructor(private readonly answerAt: "later" | "soon" = "later") {}

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  send(audio: Uint8Array): void {
    this.frames.push(audio);
    this.bytes += audio.byteLength;
  }

  commit(): void {
    this.ask("commit");
  }

  clear(): void {
    this.ask("clear");
  }

  end(): void {
    this.calls.push("end");
    this.ending = true;
    if (!this.owed.length) this.queue.end();
  }

  cancel(): void {
    this.cancelled = true;
    this.queue.end();
  }

  fail(message: string): void {
    this.queue.fail(new ProviderError(message, true));
  }

  /** Answers the oldest commit or clear. */
  answer(): void {
    const what = this.owed.shift();
    const atMs = this.bytes / 32;
    if (what === "clear") this.queue.push({ type: "cleared", atMs });
    else {
      this.queue.push({ type: "transcript", final: true, text: `${this.bytes - this.finalAt} bytes`, startMs: this.finalAt / 32, endMs: atMs });
      this.finalAt = this.bytes;
      this.queue.push({ type: "committed", origin: "client", atMs });
    }
    if (this.ending && !this.owed.length) this.queue.end();
  }

  private ask(what: "commit" | "clear"): void {
    this.calls.push(what);
    this.owed.push(what);
    if (this.answerAt === "soon") setTimeout(() => this.answer(), 5);
  }
}

/** VAD lanes the test speaks for: what the wrapper asked of its lane, and a way to play the VAD. */
function scriptedLanes() {
  const calls: string[] = [];
  let listener: ((msg: FromAudio) => void) | undefined;
  const lanes: VadLanes = {
    open(options, l) {
      calls.push(`open:${options.rate}:${options.autoCommit}${options.scores ? ":scores" : ""}`);
      listener = l;
      return {
        audio: (frame) => calls.push(`audio:${frame.byteLength}`),
        commit: () => calls.push("commit"),
        clear: () => calls.push("clear"),
        end: () => calls.push("end"),
        drop: () => calls.push("drop"),
      };
    },
  };
  const vad = (msg: Record<string, unknown>) => listener!({ sid: 1, ...msg } as FromAudio);
  return { lanes, calls, vad };
}

/** Reads a stream's events as they come; `settled` is when its iteration ended or threw. */
function reader(stream: SttStream) {
  const events: SttEvent[] = [];
  const settled = (async () => {
    try {
      for await (const ev of stream) events.push(ev);
      return undefined;
    } catch (err) {
      return err as Error;
    }
  })();
  return { events, settled };
}

const tick = () => Bun.sleep(1);
const brief = (ev: SttEvent) =>
  ev.type === "signal"
    ? `${ev.origin}:${ev.signal}@${ev.atMs}`
    : ev.type === "committed"
      ? `committed:${ev.origin}@${ev.atMs}`
      : ev.type === "transcript"
        ? `final:${ev.text}`
        : ev.type === "vad"
          ? `vad:${ev.score}@${ev.atMs}`
          : `cleared@${ev.atMs}`;
const OPTIONS = { rate: 16000, vad: DEFAULT_VAD, autoCommit: true };

describe("router turns over a stream of any family (scripted VAD)", () => {
  test("an end of speech commits the stream; its answer is told as the router's commit, after the router's end", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const wrapped = withRouterTurns(inner, lanes, OPTIONS);
    const out = reader(wrapped);
    wrapped.send(new Uint8Array(3200));
    vad({ ev: "speech_started", atMs: 40 });
    vad({ ev: "speech_ended", atMs: 90 });
    expect(inner.calls).toEqual(["commit"]);
    inner.answer();
    await tick();
    expect(out.events.map(brief)).toEqual(["router:started@40", "final:3200 bytes", "router:end@90", "committed:router@90"]);
    expect(calls).toEqual(["open:16000:false", "audio:3200"]); // the lane never commits on its own: the VAD keeps listening
  });

  test("router events that come while a commit or clear is on its way wait behind its answer: they belong to the next turn", async () => {
    const { lanes, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const wrapped = withRouterTurns(inner, lanes, OPTIONS);
    const out = reader(wrapped);
    wrapped.send(new Uint8Array(640));
    wrapped.commit();
    vad({ ev: "committed", atMs: 20 });
    vad({ ev: "speech_started", atMs: 30 });
    wrapped.clear();
    vad({ ev: "cleared", atMs: 40 });
    vad({ ev: "speech_started", atMs: 50 });
    await tick();
    expect(out.events).toEqual([]);
    inner.answer();
    await tick();
    expect(out.events.map(brief)).toEqual(["final:640 bytes", "committed:client@20", "router:started@30"]);
    inner.answer();
    await tick();
    expect(out.events.map(brief).slice(3)).toEqual(["cleared@20", "router:started@50"]);
  });

  test("scores asked for: the lane is opened for them, and each is told as a `vad` event in its place among the turn's events", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const out = reader(withRouterTurns(inner, lanes, { ...OPTIONS, scores: true }));
    vad({ ev: "vad_score", score: 0.02, atMs: 256 });
    vad({ ev: "speech_started", atMs: 300 });
    vad({ ev: "vad_score", score: 0.99, atMs: 512 });
    vad({ ev: "speech_ended", atMs: 700 });
    vad({ ev: "vad_score", score: 0.01, atMs: 768 }); // after the router's commit was asked: it waits for the answer
    await tick();
    expect(out.events.map(brief)).toEqual(["vad:0.02@256", "router:started@300", "vad:0.99@512"]);
    inner.answer();
    await tick();
    expect(out.events.map(brief).slice(3)).toEqual(["final:0 bytes", "router:end@700", "committed:router@700", "vad:0.01@768"]);
    expect(calls[0]).toBe("open:16000:false:scores");
  });

  test("a client commit mid-utterance ends the turn: the VAD's later end of that speech commits nothing more", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream("soon");
    const wrapped = withRouterTurns(inner, lanes, OPTIONS);
    reader(wrapped);
    vad({ ev: "speech_started", atMs: 10 });
    wrapped.commit();
    vad({ ev: "committed", atMs: 15 });
    vad({ ev: "speech_ended", atMs: 60 });
    expect(inner.calls).toEqual(["commit"]);
    expect(calls).toContain("commit");
  });

  test("manual commit: an end of speech is only signalled", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const wrapped = withRouterTurns(inner, lanes, { ...OPTIONS, autoCommit: false });
    const out = reader(wrapped);
    vad({ ev: "speech_started", atMs: 10 });
    vad({ ev: "speech_ended", atMs: 60 });
    await tick();
    expect(out.events.map(brief)).toEqual(["router:started@10", "router:end@60"]);
    expect(inner.calls).toEqual([]);
    expect(calls[0]).toBe("open:16000:false"); // the lane never commits on its own either way
  });

  test("the end reaches the stream only once the VAD has read all the audio; the lane is let go when the stream ends", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const wrapped = withRouterTurns(inner, lanes, OPTIONS);
    const out = reader(wrapped);
    wrapped.send(new Uint8Array(640));
    wrapped.end();
    expect(inner.calls).toEqual([]);
    vad({ ev: "speech_started", atMs: 5 });
    vad({ ev: "ended", audioMs: 20 });
    expect(inner.calls).toEqual(["end"]);
    expect(await out.settled).toBeUndefined();
    expect(out.events.map(brief)).toEqual(["router:started@5"]);
    expect(calls.slice(-2)).toEqual(["end", "drop"]);
  });

  test("a VAD failure fails the stream with a retryable ProviderError and cancels the recognizer", async () => {
    const { lanes, calls, vad } = scriptedLanes();
    const inner = new TrivialStream();
    const out = reader(withRouterTurns(inner, lanes, OPTIONS));
    vad({ ev: "error", message: "audio worker exited" });
    const err = await out.settled;
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ message: "the router VAD failed: audio worker exited", retryable: true });
    expect(inner.cancelled).toBe(true);
    await tick();
    expect(calls.at(-1)).toBe("drop");
  });

  test("a recognizer failure reaches the reader as it was; cancel lets the lane and the recognizer go", async () => {
    const failing = scriptedLanes();
    const inner = new TrivialStream();
    const out = reader(withRouterTurns(inner, failing.lanes, OPTIONS));
    inner.fail("upstream closed 1011");
    expect(await out.settled).toMatchObject({ message: "upstream closed 1011", retryable: true });
    expect(failing.calls.at(-1)).toBe("drop");

    const cancelled = scriptedLanes();
    const other = new TrivialStream();
    const wrapped = withRouterTurns(other, cancelled.lanes, OPTIONS);
    const read = reader(wrapped);
    wrapped.cancel();
    expect(await read.settled).toBeUndefined();
    expect(other.cancelled).toBe(true);
    expect(cancelled.calls).toContain("drop");
  });
});

describe("router turns with the audio workers' VAD, on real speech", () => {
  const pool = new AudioPool(1, { perWorker: 1, queue: 0, waitMs: 0 });
  afterAll(() => pool.close());

  test("a trivial stream gets a router-committed turn per utterance, near the spoken truth, and every frame intact", async () => {
    const pieces = [silence(500), speak("Thank you very much for your help."), silence(1200), speak("I would like a cup of coffee."), silence(900)];
    const truth = spokenSpans(pieces);
    const pcm = concat(pieces);
    const inner = new TrivialStream("soon");
    const wrapped = withRouterTurns(inner, pool, OPTIONS);
    const out = reader(wrapped);
    const sent = frames(pcm);
    for (const f of sent) wrapped.send(f);
    wrapped.end();
    expect(await out.settled).toBeUndefined();

    const turns = out.events.map((e) => e.type + (e.type === "signal" || e.type === "committed" ? `:${e.origin}` : ""));
    expect(turns).toEqual(["signal:router", "transcript", "signal:router", "committed:router", "signal:router", "transcript", "signal:router", "committed:router"]);
    const atMs = (type: SttEvent["type"], signal?: string) =>
      out.events.flatMap((e) => (e.type === type && e.type !== "transcript" && (!signal || (e.type === "signal" && e.signal === signal)) ? [e.atMs] : []));
    const ends = atMs("committed");
    const starts = atMs("signal", "started");
    truth.forEach(([s, e], i) => {
      expect(Math.abs(starts[i] - s)).toBeLessThanOrEqual(150);
      expect(Math.abs(ends[i] - e)).toBeLessThanOrEqual(150);
    });
    // The lane took copies: the stream's frames are the very frames sent, none detached or changed.
    expect(inner.frames).toHaveLength(sent.length);
    expect(inner.frames.every((f, i) => f === sent[i])).toBe(true);
    expect(Buffer.concat(inner.frames).equals(Buffer.from(pcm.buffer))).toBe(true);
    expect(inner.calls).toEqual(["commit", "commit", "end"]);
  }, 30_000);
});

/** A family with a commit frame and no turn detector, served by the trivial stream. */
const TRIVIAL_FAMILY: SttFamily = {
  name: "trivial",
  portableOptions: ["interim_results", "min_silence_duration_ms"],
  turnDetector: "none",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: false,
  inputFormats: ["pcm_16000"],
  audioOptions: {},
  passthrough: false,
};

class TrivialStt implements SttProvider {
  readonly id = "trivial";
  readonly requests: SttStreamRequest[] = [];
  family(): SttFamily {
    return TRIVIAL_FAMILY;
  }
  async open(req: SttStreamRequest): Promise<SttStream> {
    this.requests.push(req);
    return new TrivialStream("soon");
  }
}

function trivialCatalogue(): CatalogueData {
  return oneBindingCatalogue("trivial", "Trivial test", false, streamingSttBinding("trivial-1", "test/trivial-1"), "Trivial test");
}

describe("router turns through /v1/stt for a family the router knows only as data", () => {
  const provider = new TrivialStt();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, { extra: { catalogue: trivialCatalogue(), providers: [], sttProviders: [provider] } });
  });
  afterAll(() => server.stop(0));

  test("the session wraps the family's stream: router signals and commits, and the adapter is given no VAD", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=test/trivial-1&audio_format=pcm_16000"), bearer(server.key));
    await c.opened;
    const pcm = concat([silence(300), speak("Good morning everyone."), silence(900)]);
    for (const f of frames(pcm)) c.ws.send(f);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(rec.events[0]).toMatchObject({ type: "stt.session.started", provider: "trivial", input_config: { turn_detector: "router_vad" } });
    expect(rec.events.slice(1, -1).map((e) => `${e.type}${e.origin ? `:${e.origin}` : ""}`)).toEqual(["stt.signal:router", "stt.transcript.final", "stt.signal:router", "stt.audio.committed:router"]);
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.session.ended", billed_seconds: Math.ceil(pcm.length / 16000) });
    expect(provider.requests.at(-1)!.routerVad).toBeUndefined();
  }, 30_000);
});
