import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { LONG_ANSWER } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { FRONT_TLS, frontedServerWithApp, recorder, sdkThroughFront } from "./helpers/oai-realtime.ts";
import { unreachableAppProfile, until as waitUntil } from "./helpers/realtime.ts";
import { concat, silence, speak, to24k } from "./helpers/speech.ts";

// /oai/realtime?model=<profile id> with the `openai` package's OpenAIRealtimeWS. The SDK always
// connects with wss://, so the test reaches the router through a TLS front (helpers/tls-front.ts).

const f = frontedServerWithApp();

async function profile(key: string, path = "/echo"): Promise<string> {
  const res = await fetch(`${f.server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "oai", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: f.app.url(path) } } }),
  });
  return ((await res.json()) as { id: string }).id;
}

const until = (check: () => boolean) => waitUntil(check, 15_000);

describe.skipIf(!localSttAvailable)("/oai/realtime with the OpenAI SDK", () => {
  test("a profile as a conversation: session.created, the caller's transcription, a response with 24 kHz audio and its transcript", async () => {
    const { key } = await fundedAccount(f.server);
    const model = await profile(key);
    const rt = new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(f.front, key));
    const events: Record<string, any>[] = [];
    const errors: unknown[] = [];
    rt.on("event", (ev) => events.push(ev as never));
    rt.on("error", (err) => errors.push(err));
    await until(() => events.some((e) => e.type === "session.created"));
    rt.send({ type: "session.update", session: { type: "realtime", output_modalities: ["audio"] } });
    const audio = to24k(concat([silence(300), speak("Thank you very much for your help."), silence(1000)]));
    for (let at = 0; at < audio.byteLength; at += 4800) {
      rt.send({ type: "input_audio_buffer.append", audio: audio.subarray(at, at + 4800).toString("base64") });
      await Bun.sleep(100);
    }
    await until(() => events.some((e) => e.type === "response.done"));
    rt.close();

    expect(errors).toEqual([]);
    expect(events[0]).toMatchObject({ type: "session.created", session: { type: "realtime", model, audio: { output: { format: { type: "audio/pcm", rate: 24000 } } } } });
    expect(events.some((e) => e.type === "session.updated")).toBe(true);
    expect(events.some((e) => e.type === "input_audio_buffer.speech_started")).toBe(true);
    const completed = events.find((e) => e.type === "conversation.item.input_audio_transcription.completed")!;
    expect(completed.transcript).toBe("thank you very much for your help");
    const heard = events.filter((e) => e.type === "conversation.item.input_audio_transcription.delta" && e.item_id === completed.item_id);
    expect(heard.map((e) => e.delta).join("")).toBe(completed.transcript);
    expect(events.find((e) => e.type === "input_audio_buffer.committed")).toMatchObject({ item_id: completed.item_id });
    const created = events.find((e) => e.type === "response.created")!;
    const id = created.response.id;
    const transcript = events
      .filter((e) => e.type === "response.output_audio_transcript.delta" && e.response_id === id)
      .map((e) => e.delta)
      .join("");
    expect(transcript).toBe("You said: thank you very much for your help");
    const pcm = Buffer.concat(events.filter((e) => e.type === "response.output_audio.delta" && e.response_id === id).map((e) => Buffer.from(e.delta, "base64")));
    // Flite speaks the answer for well over a second, delivered at 24 kHz.
    expect(pcm.byteLength / 48_000).toBeGreaterThan(1.5);
    expect(events.find((e) => e.type === "response.output_audio_transcript.done")).toMatchObject({ response_id: id, transcript });
    expect(events.find((e) => e.type === "response.done")).toMatchObject({ response: { id, status: "completed" } });
    // Every server event has an event_id.
    expect(events.every((e) => typeof e.event_id === "string")).toBe(true);
  }, 40_000);

  /** A conversation client of the SDK, recording every event; `say` streams 16 kHz speech as 24 kHz appends in real time. */
  function converse(model: string, apiKey: string) {
    const rt = new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(f.front, apiKey));
    const { events, append, of } = recorder(rt);
    return { rt, events, say: (pcm: Int16Array) => append(to24k(pcm), 4800), of };
  }

  /** How the client learnt that `responseId` was cut: a cancelled response.done while it was made, a truncated item once it was all sent. */
  const cut = (events: Record<string, any>[], responseId: string) =>
    events.find(
      (e) => (e.type === "response.done" && e.response.id === responseId && e.response.status === "cancelled") || (e.type === "conversation.item.truncated" && e.item_id === `item_${responseId}`),
    );

  test("barge-in: the caller talks over the answer; the client is told where it was cut, and none of its audio follows", async () => {
    const { key } = await fundedAccount(f.server);
    const c = converse(await profile(key, "/long"), key);
    await until(() => c.of("session.created").length === 1);
    await c.say(concat([silence(300), speak("What are your opening hours?"), silence(1000)]));
    // The answer's audio goes out as fast as it is made: once it is all sent, the client is still
    // playing it (seconds of speech) when the caller talks over it, so the cut is a truncated item.
    await until(() => c.of("response.output_audio.done").length > 0);
    await c.say(concat([speak("Thank you, that is all."), silence(1000)]));
    const id = c.of("response.created")[0]!.response.id as string;
    await until(() => cut(c.events, id) !== undefined);
    c.rt.close();
    const at = c.events.indexOf(cut(c.events, id)!);
    expect(c.events.slice(at).some((e) => e.type === "response.output_audio.delta" && e.response_id === id)).toBe(false);
    // The caller's second turn started before the cut, and a response is done once only.
    const started = c.of("input_audio_buffer.speech_started");
    expect(started.length).toBe(2);
    expect(c.events.indexOf(started[1]!)).toBeLessThan(at);
    expect(c.events.filter((e) => e.type === "response.done" && e.response.id === id).length).toBe(1);
    const audioMs = c.events.filter((e) => e.type === "response.output_audio.delta" && e.response_id === id).reduce((ms, e) => ms + Buffer.from(e.delta, "base64").byteLength / 48, 0);
    // Where its playback was cut: some of it played, not all.
    expect(c.events[at]).toMatchObject({ type: "conversation.item.truncated", item_id: `item_${id}`, content_index: 0 });
    expect(c.events[at]!.audio_end_ms).toBeGreaterThan(0);
    expect(c.events[at]!.audio_end_ms).toBeLessThan(audioMs);
    expect(
      c
        .of("response.output_audio_transcript.delta")
        .filter((e) => e.response_id === id)
        .map((e) => e.delta)
        .join(""),
    ).toBe(LONG_ANSWER);
  }, 40_000);

  test("response.cancel stops the answer; turn_detection null leaves the turn open until input_audio_buffer.commit", async () => {
    const { key } = await fundedAccount(f.server);
    const c = converse(await profile(key, "/long"), key);
    await until(() => c.of("session.created").length === 1);
    c.rt.send({ type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null } } } });
    await until(() => c.of("session.updated").length === 1);
    expect(c.of("session.updated")[0]!.session.audio.input.turn_detection).toBeNull();
    await c.say(concat([silence(300), speak("What are your opening hours?"), silence(1000)]));
    // A second of silence has gone by: the profile's turn detection would have ended the turn.
    expect(c.of("input_audio_buffer.committed")).toEqual([]);
    c.rt.send({ type: "input_audio_buffer.commit" });
    await until(() => c.of("response.output_audio.delta").length > 0);
    c.rt.send({ type: "response.cancel" });
    const id = c.of("response.created")[0]!.response.id as string;
    await until(() => cut(c.events, id) !== undefined);
    c.rt.close();
    expect(c.of("conversation.item.input_audio_transcription.completed")[0]!.transcript).toStartWith("what are your opening hours");
    expect(c.events.slice(c.events.indexOf(cut(c.events, id)!)).some((e) => e.type === "response.output_audio.delta")).toBe(false);
    expect(c.of("error")).toEqual([]);
  }, 40_000);

  test("an ek_ secret minted for a profile (the SDK's clientSecrets.create) opens its conversation once, as the Bearer key", async () => {
    const { key } = await fundedAccount(f.server);
    const model = await profile(key);
    const secret = await new OpenAI({ apiKey: key, baseURL: `${f.server.url}/oai` }).realtime.clientSecrets.create({ session: { type: "realtime", model } });
    expect(secret.value).toStartWith("ek_");
    expect(secret.session).toMatchObject({ type: "realtime", model });
    const c = converse(model, secret.value);
    await until(() => c.of("session.created").length === 1);
    expect(c.of("session.created")[0]!.session.model).toBe(model);
    c.rt.close();
    const again = converse(model, secret.value);
    const closed = await new Promise<number>((resolve) => again.rt.socket.on("close", (code: number) => resolve(code)));
    expect(closed).toBe(4401);
  }, 20_000);

  test("faults as on /v1/realtime: an unreachable application is an OpenAI error event, then 1011 naming it", async () => {
    const { key } = await fundedAccount(f.server);
    const { id, port } = await unreachableAppProfile(f.server, key);
    const c = converse(id, key);
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => c.rt.socket.on("close", (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })));
    expect(c.of("error").at(-1)!.error).toMatchObject({ type: "server_error", code: "application_unavailable" });
    expect(closed.code).toBe(1011);
    expect(closed.reason).toContain(`127.0.0.1:${port}`);
  });

  test("an application that hangs up mid-answer: what it sent is spoken (audio, response.done), then an application_disconnected error event and 1011", async () => {
    const { key } = await fundedAccount(f.server);
    const c = converse(await profile(key, "/hangup"), key);
    let closed: { code: number; reason: string } | undefined;
    c.rt.socket.on("close", (code: number, reason: Buffer) => (closed = { code, reason: String(reason) }));
    await until(() => c.of("session.created").length === 1);
    await c.say(concat([silence(300), speak("Thank you very much for your help."), silence(1000)]));
    // The caller stays on the line, silent, until the conversation ends.
    const quiet = to24k(silence(100)).toString("base64");
    for (let i = 0; i < 150 && !closed; i++, await Bun.sleep(100)) c.rt.send({ type: "input_audio_buffer.append", audio: quiet });
    expect(closed?.code).toBe(1011);
    expect(closed?.reason).toStartWith("application_disconnected: ");
    const error = c.of("error").at(-1)!;
    expect(error.error).toMatchObject({ type: "server_error", code: "application_disconnected" });
    const id = c.of("response.created")[0]!.response.id as string;
    const transcript = c
      .of("response.output_audio_transcript.delta")
      .filter((e) => e.response_id === id)
      .map((e) => e.delta)
      .join("");
    expect(transcript).toBe("You said: thank you very much for your help");
    const done = c.events.findIndex((e) => e.type === "response.done" && e.response.id === id);
    expect(c.events[done]!.response.status).toBe("completed");
    expect(c.events.slice(0, done).filter((e) => e.type === "response.output_audio.delta" && e.response_id === id).length).toBeGreaterThan(0);
    expect(c.events.indexOf(error)).toBeGreaterThan(done);
  }, 40_000);

  test("the balance runs out mid-call: an insufficient_quota error event, then 4402", async () => {
    // 35 credits: three seconds of the recognizer, then nothing.
    const { key } = await fundedAccount(f.server, 35);
    const c = converse(await profile(key, "/silent"), key);
    const closed = new Promise<number>((resolve) => c.rt.socket.on("close", (code: number) => resolve(code)));
    await until(() => c.of("session.created").length === 1);
    void c.say(concat([silence(300), speak("Thank you very much for your help. I would like to hear more about it."), silence(2000)])).catch(() => {});
    expect(await closed).toBe(4402);
    expect(c.of("error").at(-1)!.error).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
  }, 30_000);

  test("a model that is no profile of the account: an OpenAI error naming model, before the upgrade", async () => {
    const { key } = await fundedAccount(f.server);
    const res = await fetch(`${f.server.url}/oai/realtime?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${key}`, Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", code: "model_not_found", param: "model" } });
  });
});
