import { expect, test } from "bun:test";
import { ApiError } from "../src/errors.ts";
import { HttpTtsPort } from "../src/surfaces/http-tts-port.ts";
import { sseShape } from "../src/surfaces/oai/speech-sse.ts";

// The port that turns a TTS session into an HTTP response: every way the session or the client
// ends settles the response and wakes a sender waiting for the reader.

const port = () => new HttpTtsPort({ contentType: () => "audio/mpeg" }, (e: ApiError) => Response.json({ code: e.code }, { status: e.status }));
const started = (p: HttpTtsPort) => p.event({ type: "audio_started", provider: "p", model: "p/m", format: { encoding: "mp3", sampleRate: 44100, channels: 1 } });

test("the client going away after audio began ends the body (a whole-file read settles) and wakes a waiting sender", async () => {
  const p = port();
  started(p);
  const waiting = p.sendAudio(new Uint8Array(300 * 1024)); // over the high-water mark: waits for the reader
  expect(waiting).toBeInstanceOf(Promise);
  const res = await p.response;
  const read = res.arrayBuffer().then(
    () => "read",
    () => "ended in error",
  );
  p.abandon();
  expect(await read).toBe("ended in error");
  await waiting; // settles instead of hanging
});

test("before any audio: the response is the client-closed-request answer nobody reads", async () => {
  const p = port();
  p.abandon();
  expect((await p.response).status).toBe(499);
});

test("a failure after audio began ends the body with the session's own error, so a 402 stays a 402", async () => {
  const p = port();
  started(p);
  p.sendAudio(new Uint8Array(10));
  const res = await p.response;
  p.event({ type: "error", code: "insufficient_balance", message: "the balance is used up" });
  p.close(4402, "insufficient_balance");
  const err = await res.arrayBuffer().then(
    () => undefined,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect(err).toMatchObject({ code: "insufficient_balance", status: 402 });
});

test("an SSE shape: a failure after audio began is the error event, then the body closes", async () => {
  const audio = { contentType: () => "audio/mpeg" };
  const p = new HttpTtsPort(sseShape(audio, 3), (e: ApiError) => Response.json({ code: e.code }, { status: e.status }));
  started(p);
  p.sendAudio(new Uint8Array([1, 2, 3]));
  const res = await p.response;
  p.event({ type: "error", code: "upstream_error", message: "the provider failed" });
  p.close(1011, "upstream_error");
  const events = (await res.text()).trim().split("\n\n");
  expect(events[0]).toBe(`event: speech.audio.delta\ndata: {"type":"speech.audio.delta","audio":"AQID"}`);
  expect(events[1]).toStartWith("event: error\ndata: ");
  expect(JSON.parse(events[1].split("data: ")[1])).toEqual({ type: "error", error: { message: "the provider failed", type: "api_error", param: null, code: "upstream_error" } });
  expect(events.length).toBe(2); // no done event
});

/** A shape whose encoder tags what it was given (or, `holding`, gives nothing yet, as one waiting for a whole frame), and records how it ended. */
function encodingPort(holding = false) {
  const log: string[] = [];
  const encoder = {
    encode: (pcm: Uint8Array) => (holding ? new Uint8Array(0) : new Uint8Array([pcm.byteLength])),
    flush: () => {
      log.push("flush");
      return new Uint8Array([255]);
    },
    release: () => void log.push("release"),
  };
  const p = new HttpTtsPort({ contentType: () => "audio/test", encoder: () => encoder }, (e: ApiError) => Response.json({ code: e.code }, { status: e.status }));
  p.event({ type: "audio_started", provider: "p", model: "p/m", format: { encoding: "pcm_s16le", sampleRate: 16000, channels: 1 } });
  return { p, log };
}

test("an encoder: each chunk encoded, its flush ends a good body, and it is released however the body ends", async () => {
  const good = encodingPort();
  good.p.sendAudio(new Uint8Array(4));
  good.p.sendAudio(new Uint8Array(6));
  const res = await good.p.response;
  good.p.close(1000, "done");
  expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([4, 6, 255]);
  expect(good.log).toEqual(["flush", "release"]);

  const failed = encodingPort();
  failed.p.sendAudio(new Uint8Array(4));
  const cut = await failed.p.response;
  failed.p.close(1011, "upstream_error");
  await cut.arrayBuffer().catch(() => {});
  expect(failed.log).toEqual(["release"]); // no flush into a failed body

  const gone = encodingPort();
  gone.p.abandon(); // before any byte: no body to end
  expect(gone.log).toEqual(["release"]);
});

test("an encoder that has given nothing yet when the session fails: the answer is the error, and the encoder is released", async () => {
  const { p, log } = encodingPort(true);
  p.sendAudio(new Uint8Array(4));
  p.event({ type: "error", code: "upstream_error", message: "the provider failed" });
  p.close(1011, "upstream_error");
  const res = await p.response;
  expect(res.status).toBe(502);
  expect(await res.json()).toEqual({ code: "upstream_error" });
  expect(log).toEqual(["release"]);
});

test("an encoder is released when the client stops reading the body", async () => {
  const { p, log } = encodingPort();
  p.sendAudio(new Uint8Array(4));
  await (await p.response).body!.cancel();
  expect(log).toEqual(["release"]);
});
