import { describe, expect, test } from "bun:test";
import { OpenAIRealtimeWebSocket as AgentsWebSocket, RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { LONG_ANSWER } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { FRONT_TLS, frontedServerWithApp, recorder, sdkThroughFront, USER_TURN_EVENTS, ANSWER_DONE_EVENTS } from "./helpers/oai-realtime.ts";
import { realtimeProfile, until as waitUntil } from "./helpers/realtime.ts";
import { concat, silence, speak, to24k } from "./helpers/speech.ts";

// /oai/realtime's whole event stream as OpenAI sends it (GA; upstreams sheet 2c, the `openai`
// package's RealtimeServerEvent): the item and content-part lifecycle, OpenAI's order around
// speech, commit and transcription, the error before a refusal's close, and the history OpenAI's
// Agents SDK builds from it through a barge-in.

const f = frontedServerWithApp();

const until = (check: () => boolean) => waitUntil(check, 15_000);
const SAID = "thank you very much for your help";
const utterance = () => concat([silence(300), speak("Thank you very much for your help."), silence(1000)]);
const profile = (key: string, path: string) => realtimeProfile(f.server, key, f.app.url(path));

/** The types in order, each run of deltas of one kind as one. */
const sequence = (events: Record<string, any>[]) => events.map((e) => e.type as string).filter((type, i, all) => !(type.endsWith(".delta") && all[i - 1] === type));

describe.skipIf(!localSttAvailable)("/oai/realtime events in OpenAI's order", () => {
  test("one conversation turn with OpenAIRealtimeWS: the whole sequence, ids linking items, responses and content parts", async () => {
    const { key } = await fundedAccount(f.server);
    const model = await profile(key, "/echo");
    const rt = new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(f.front, key));
    const r = recorder(rt);
    await until(() => r.of("session.created").length === 1);
    await r.append(to24k(utterance()), 4800);
    await until(() => r.of("response.done").length === 1);
    rt.close();

    // Audio and its transcript stream side by side: their deltas are checked apart.
    const streamed = ["response.output_audio.delta", "response.output_audio_transcript.delta"];
    expect(sequence(r.events.filter((e) => !streamed.includes(e.type)))).toEqual([
      "session.created",
      ...USER_TURN_EVENTS,
      "response.created",
      "response.output_item.added",
      "conversation.item.added",
      "response.content_part.added",
      ...ANSWER_DONE_EVENTS,
    ]);
    const index = (type: string) => r.events.findIndex((e) => e.type === type);
    const deltas = r.events.flatMap((e, i) => (streamed.includes(e.type) ? [i] : []));
    expect(Math.min(...deltas)).toBeGreaterThan(index("response.content_part.added"));
    expect(Math.max(...deltas)).toBeLessThan(index("response.output_audio.done"));

    // The caller's turn: one item id from speech_started to the completed transcript.
    const userId = r.of("input_audio_buffer.speech_started")[0]!.item_id as string;
    for (const type of ["input_audio_buffer.speech_stopped", "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed"]) expect(r.of(type)[0]!.item_id).toBe(userId);
    expect(r.of("input_audio_buffer.committed")[0]!.previous_item_id).toBeNull();
    const [userAdded, assistantAdded] = r.of("conversation.item.added");
    const [userDone, assistantDone] = r.of("conversation.item.done");
    for (const e of [userAdded, userDone])
      expect(e).toMatchObject({ previous_item_id: null, item: { id: userId, type: "message", role: "user", status: "completed", content: [{ type: "input_audio", transcript: null }] } });
    expect(r.of("conversation.item.input_audio_transcription.completed")[0]).toMatchObject({ content_index: 0, transcript: SAID });
    expect(
      r
        .of("conversation.item.input_audio_transcription.delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe(SAID);

    // The answer: one response, one assistant item after the caller's, one audio content part.
    const responseId = r.of("response.created")[0]!.response.id as string;
    const itemId = r.of("response.output_item.added")[0]!.item.id as string;
    expect(itemId).not.toBe(userId);
    const answer = "You said: thank you very much for your help";
    expect(r.of("response.output_item.added")[0]).toMatchObject({ response_id: responseId, output_index: 0, item: { role: "assistant", status: "in_progress", content: [] } });
    expect(assistantAdded).toMatchObject({ previous_item_id: userId, item: { id: itemId, role: "assistant", status: "in_progress" } });
    const partOf = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
    expect(r.of("response.content_part.added")[0]).toMatchObject({ ...partOf, part: { type: "audio", transcript: "" } });
    for (const e of r.events.filter((e) => streamed.includes(e.type))) expect(e).toMatchObject(partOf);
    const finished = { id: itemId, role: "assistant", status: "completed", content: [{ type: "output_audio", transcript: answer }] };
    expect(r.of("response.output_audio.done")[0]).toMatchObject(partOf);
    expect(r.of("response.output_audio_transcript.done")[0]).toMatchObject({ ...partOf, transcript: answer });
    expect(r.of("response.content_part.done")[0]).toMatchObject({ ...partOf, part: { type: "audio", transcript: answer } });
    expect(r.of("response.output_item.done")[0]).toMatchObject({ response_id: responseId, output_index: 0, item: finished });
    expect(assistantDone).toMatchObject({ previous_item_id: userId, item: finished });
    expect(r.of("response.done")[0]).toMatchObject({ response: { id: responseId, status: "completed", output: [finished] } });
    expect(new Set(r.events.map((e) => e.event_id)).size).toBe(r.events.length);
  }, 40_000);

  test("a transcription session's turn: speech started and stopped, committed, the user item, then its transcription", async () => {
    const { key } = await fundedAccount(f.server);
    const rt = new OpenAIRealtimeWS({ intent: "transcription", options: FRONT_TLS }, sdkThroughFront(f.front, key));
    const r = recorder(rt);
    await until(() => r.of("session.created").length === 1);
    rt.send({ type: "session.update", session: { type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" } } } } });
    await r.append(to24k(utterance()), 4800);
    await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1);
    rt.close();
    expect(sequence(r.events)).toEqual(["session.created", "session.updated", ...USER_TURN_EVENTS]);
    const itemId = r.of("input_audio_buffer.speech_started")[0]!.item_id as string;
    expect(r.events.filter((e) => "item_id" in e).every((e) => e.item_id === itemId)).toBe(true);
    for (const e of [...r.of("conversation.item.added"), ...r.of("conversation.item.done")])
      expect(e).toMatchObject({ previous_item_id: null, item: { id: itemId, role: "user", content: [{ type: "input_audio" }] } });
    expect(r.of("conversation.item.input_audio_transcription.completed")[0]!.transcript).toBe(SAID);
  }, 40_000);

  test("a spent ek_ secret: an invalid_client_secret error event, then the close 4401", async () => {
    const { key } = await fundedAccount(f.server);
    const model = await profile(key, "/echo");
    const secret = await new OpenAI({ apiKey: key, baseURL: `${f.server.url}/oai` }).realtime.clientSecrets.create({ session: { type: "realtime", model } });
    const first = recorder(new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(f.front, secret.value)));
    await until(() => first.of("session.created").length === 1);
    const spent = new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(f.front, secret.value));
    const r = recorder(spent);
    const closed = await new Promise<{ code: number; at: number }>((resolve) => spent.socket.on("close", (code: number) => resolve({ code, at: r.events.length })));
    expect(closed.code).toBe(4401);
    expect(r.events).toEqual([expect.objectContaining({ type: "error", error: expect.objectContaining({ type: "invalid_request_error", code: "invalid_client_secret" }) })]);
    expect(closed.at).toBe(1);
  }, 20_000);

  test("OpenAI's Agents SDK (RealtimeSession, WebSocket transport) holds the history through a barge-in", async () => {
    const { key } = await fundedAccount(f.server);
    const model = await profile(key, "/long");
    const transport = new AgentsWebSocket({ url: f.server.wsUrl(`/oai/realtime?model=${model}`), useInsecureApiKey: true });
    const session = new RealtimeSession(new RealtimeAgent({ name: "voxroute", instructions: "the profile's application answers" }), { transport, model });
    const errors: unknown[] = [];
    const seen: Record<string, any>[] = [];
    session.on("error", (e) => errors.push(e));
    session.on("transport_event", (e) => seen.push(e as never));
    await session.connect({ apiKey: key });
    const say = async (pcm: Int16Array) => {
      const bytes = to24k(pcm);
      for (let at = 0; at < bytes.byteLength; at += 4800, await Bun.sleep(100))
        session.sendAudio(bytes.buffer.slice(bytes.byteOffset + at, bytes.byteOffset + Math.min(at + 4800, bytes.byteLength)) as ArrayBuffer);
    };
    await say(concat([silence(300), speak("What are your opening hours?"), silence(1000)]));
    await until(() => seen.some((e) => e.type === "response.output_audio.done"));
    // The answer is all sent and still playing (seconds of it) when the caller talks over it.
    await say(concat([speak("Thank you, that is all."), silence(1000)]));
    await until(
      () => session.history.filter((i) => i.type === "message" && i.role === "user").length === 2 && seen.some((e) => e.type === "conversation.item.retrieved" && e.item.role === "assistant"),
    );
    session.close();

    expect(errors).toEqual([]);
    const [first, answer, second] = session.history as any[];
    expect(first).toMatchObject({ type: "message", role: "user", status: "completed", content: [{ type: "input_audio", transcript: expect.stringMatching(/^what are your opening hours/) }] });
    expect(answer).toMatchObject({ type: "message", role: "assistant", status: "incomplete" });
    // Truncated where the caller stopped hearing it: some of the answer, not all.
    const heard = answer.content[0].transcript as string;
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.length).toBeLessThan(LONG_ANSWER.length);
    expect(LONG_ANSWER.startsWith(heard)).toBe(true);
    expect(second).toMatchObject({ role: "user", content: [{ type: "input_audio", transcript: expect.stringMatching(/thank you/) }] });
    // The SDK truncated the item itself, and the router acknowledged it.
    expect(seen.some((e) => e.type === "conversation.item.truncated" && e.item_id === answer.itemId)).toBe(true);
  }, 60_000);
});
