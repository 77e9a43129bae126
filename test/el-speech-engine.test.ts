import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import { NO_PONG } from "../src/realtime/app-socket.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { startSpeechEngineApp, wordByWord } from "./helpers/speech-engine-app.ts";

// An /el Speech Engine's application spoken to in ElevenLabs' Speech Engine protocol: first on a
// raw socket (the token, the engine's headers, the order of init, user_transcript, agent_response,
// ping/pong and close, stale chunks dropped, an application that stops answering pings), then with
// the SDK's own SpeechEngineServer, which checks the token's signature. The caller types its turns
// (`user_message`), so the words are exact; test/el-conversation-browser.test.ts speaks them.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ REALTIME_APP_PING_INTERVAL_MS: "150" });
});
afterAll(async () => {
  for (let i = 0; i < 100 && server.ctx.sessions.size > 0; i++) await Bun.sleep(20);
  expect(server.ctx.sessions.size).toBe(0);
  await server.stop(0);
});

type Frame = Record<string, any>;

/** A raw application: records the connection's headers and every frame; `answer` replies to each frame. */
function rawApp(answer: (msg: Frame, ws: ServerWebSocket<unknown>) => void) {
  const got: { headers?: Headers; frames: Frame[]; closed?: { code: number; reason: string } } = { frames: [] };
  const app = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, srv) => (got.headers = req.headers) && (srv.upgrade(req) ? undefined : new Response("no", { status: 400 })),
    websocket: {
      message: (ws, data) => {
        const msg = JSON.parse(String(data));
        got.frames.push(msg);
        answer(msg, ws);
      },
      close: (_, code, reason) => void (got.closed = { code, reason }),
    },
  });
  return { got, url: `ws://127.0.0.1:${app.port}/engine`, stop: () => app.stop(true) };
}

async function engine(key: string, wsUrl: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${server.url}/el/v1/speech-engine`, {
    method: "POST",
    headers: { "xi-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "support", speech_engine: { ws_url: wsUrl, ...extra }, service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", voice_id: "slt" } } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { speech_engine_id: string }).speech_engine_id;
}

/** A caller on /el/v1/convai/conversation (answering pings); `type` sends a turn as text. */
async function caller(key: string, agentId: string) {
  const ws = new WebSocket(`${server.wsUrl("/el/v1/convai/conversation")}?agent_id=${agentId}`, { headers: { "xi-api-key": key } } as never);
  const messages: Frame[] = [];
  /** When the first audio came, and how much (16 kHz PCM) has come. */
  const audio = { since: 0, bytes: 0 };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data));
    if (msg.type === "ping") ws.send(JSON.stringify({ type: "pong", event_id: msg.ping_event.event_id }));
    else messages.push(msg);
    if (msg.type !== "audio") return;
    audio.since ||= Date.now();
    audio.bytes += Buffer.from(msg.audio_event.audio_base_64, "base64").byteLength;
  };
  const played = () => until(() => audio.bytes > 0 && Date.now() - audio.since > (audio.bytes / 32_000) * 1000 + 500, 20_000);
  await new Promise((resolve) => (ws.onopen = resolve));
  ws.send(JSON.stringify({ type: "conversation_initiation_client_data" }));
  await until(() => messages.some((m) => m.type === "conversation_initiation_metadata"));
  const answers = () => messages.filter((m) => m.type === "agent_response").map((m) => m.agent_response_event.agent_response as string);
  return { ws, messages, closed, answers, played, type: (text: string) => ws.send(JSON.stringify({ type: "user_message", text })) };
}

const claims = (authorization: string) => JSON.parse(Buffer.from(authorization.split(".")[1]!, "base64url").toString());
const answer = (ws: ServerWebSocket<unknown>, event_id: number, content: string, is_final = false) => ws.send(JSON.stringify({ type: "agent_response", content, event_id, is_final }));

describe.skipIf(!localSttAvailable)("an /el Speech Engine speaks ElevenLabs' Speech Engine protocol to its application", () => {
  test("the token and the engine's headers; init first; the conversation so far at each turn; streamed answers spoken; pings answered; close at the end", async () => {
    const app = rawApp((msg, ws) => {
      if (msg.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (msg.type !== "user_transcript") return;
      for (const word of ["You ", "said ", msg.user_transcript.at(-1).content, "."]) answer(ws, msg.event_id, word);
      answer(ws, msg.event_id, "", true);
    });
    const { key } = await fundedAccount(server);
    const c = await caller(key, await engine(key, app.url, { request_headers: { "x-app-key": "k1" } }));
    c.type("hello there");
    await until(() => c.answers().length === 1);
    // A turn typed while the answer still plays would cut it short (a barge-in): the caller waits until it has played.
    await c.played();
    c.type("goodbye");
    const spoken = () => new Set(c.messages.filter((m) => m.type === "audio").map((m) => m.audio_event.event_id)).size;
    await until(() => c.answers().length === 2 && spoken() === 2 && app.got.frames.filter((f) => f.type === "ping").length >= 2);
    c.ws.close();
    await c.closed;
    await until(() => app.got.closed !== undefined);
    app.stop();

    expect(app.got.headers!.get("x-app-key")).toBe("k1");
    const token = app.got.headers!.get("x-elevenlabs-speech-engine-authorization")!;
    expect(token).toStartWith("Bearer ");
    const { iss, sub, iat, exp } = claims(token);
    expect({ iss, sub }).toEqual({ iss: "https://api.elevenlabs.io/convai/speech-engine", sub: "convai_speech_engine_upstream" });
    expect(exp).toBeGreaterThan(iat);
    const conversationId = c.messages[0]!.conversation_initiation_metadata_event.conversation_id;
    const said = app.got.frames.filter((f) => f.type !== "ping");
    expect(said).toEqual([
      { type: "init", conversation_id: conversationId },
      { type: "user_transcript", user_transcript: [{ role: "user", content: "hello there" }], event_id: 1 },
      {
        type: "user_transcript",
        user_transcript: [
          { role: "user", content: "hello there" },
          { role: "agent", content: "You said hello there." },
          { role: "user", content: "goodbye" },
        ],
        event_id: 2,
      },
      { type: "close" },
    ]);
    expect(c.answers()).toEqual(["You said hello there.", "You said goodbye."]);
  });

  test("a new transcript during an answer aborts it: the rest of its chunks, its is_final too, are dropped; the next answer is spoken", async () => {
    let socket: ServerWebSocket<unknown> | undefined;
    const app = rawApp((msg, ws) => {
      socket = ws;
      if (msg.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (msg.type === "user_transcript" && msg.event_id === 1) answer(ws, 1, "Our opening hours are from nine in the morning. ");
    });
    const { key } = await fundedAccount(server);
    const c = await caller(key, await engine(key, app.url));
    c.type("when are you open");
    await until(() => c.messages.some((m) => m.type === "audio"));
    c.type("never mind");
    await until(() => app.got.frames.some((f) => f.event_id === 2));
    // The application goes on with the aborted answer, then answers the new turn.
    answer(socket!, 1, "We close at six in the evening.", true);
    answer(socket!, 2, "All right.", true);
    await until(() => c.answers().includes("All right."));
    c.ws.close();
    await c.closed;
    app.stop();

    const second = app.got.frames.find((f) => f.event_id === 2)!;
    expect(second.user_transcript.at(-1)).toEqual({ role: "user", content: "never mind" });
    expect(second.user_transcript[0]).toEqual({ role: "user", content: "when are you open" });
    // What the caller heard of the aborted answer, if anything, is what the conversation holds.
    for (const turn of second.user_transcript.slice(1, -1)) expect("Our opening hours are from nine in the morning. ".startsWith(turn.content)).toBe(true);
    expect(c.answers().join(" ")).not.toContain("six");
    expect(c.answers().at(-1)).toBe("All right.");
  });

  test("frames outside the protocol are answered with error naming why; the conversation goes on", async () => {
    const app = rawApp((msg, ws) => {
      if (msg.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (msg.type !== "user_transcript") return;
      for (const bad of ["not json", '{"type":"agent_response","content":5,"is_final":true}', '{"type":"agent_response","content":"x"}', '{"type":"end"}']) ws.send(bad);
      answer(ws, msg.event_id, "Fine.", true);
    });
    const { key } = await fundedAccount(server);
    const c = await caller(key, await engine(key, app.url));
    c.type("hello");
    await until(() => c.answers().length === 1 && app.got.frames.filter((f) => f.type === "error").length === 4);
    c.ws.close();
    await c.closed;
    app.stop();
    expect(app.got.frames.filter((f) => f.type === "error")).toEqual([
      { type: "error", message: "a frame is not JSON" },
      { type: "error", message: "agent_response needs a string content" },
      { type: "error", message: "agent_response's is_final is a boolean" },
      { type: "error", message: 'unknown message type "end"' },
    ]);
    expect(c.answers()).toEqual(["Fine."]);
  });

  test("an application that stops answering pings is closed 1011 and the conversation ends", async () => {
    const app = rawApp(() => {});
    const { key } = await fundedAccount(server);
    const c = await caller(key, await engine(key, app.url));
    await until(() => app.got.closed !== undefined);
    expect(app.got.closed).toEqual({ code: NO_PONG.code, reason: NO_PONG.reason });
    expect((await c.closed).code).toBe(1000);
    app.stop();
  });
});

describe.skipIf(!localSttAvailable)("with the SDK's SpeechEngineServer as the application (authentication on)", () => {
  const sdkApp = (apiKey: string) => startSpeechEngineApp(apiKey, (transcript, signal) => wordByWord(`I heard ${transcript.at(-1)!.content}.`, signal));

  test("the token signed with the creating key's hash is accepted: init, the transcript, the streamed answer heard", async () => {
    const { key } = await fundedAccount(server);
    const { stop, seen, url } = await sdkApp(key);
    const c = await caller(key, await engine(key, url));
    c.type("good morning");
    await until(() => c.answers().length === 1);
    c.ws.close();
    await c.closed;
    await stop();
    expect(seen.init).toBe(c.messages[0]!.conversation_initiation_metadata_event.conversation_id);
    expect(seen.transcripts).toEqual([[{ role: "user", content: "good morning" }]]);
    expect(c.answers()).toEqual(["I heard good morning."]);
    expect(seen.errors).toEqual([]);
  });

  test("an application holding another key refuses the connection: the conversation fails application_unavailable", async () => {
    const { key } = await fundedAccount(server);
    const other = await fundedAccount(server);
    const { stop, seen, url } = await sdkApp(other.key);
    const ws = new WebSocket(`${server.wsUrl("/el/v1/convai/conversation")}?agent_id=${await engine(key, url)}`, { headers: { "xi-api-key": key } } as never);
    ws.onopen = () => ws.send(JSON.stringify({ type: "conversation_initiation_client_data" }));
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
    await stop();
    expect(closed.code).toBe(1011);
    expect(closed.reason).toStartWith("application_unavailable");
    expect(seen.init).toBeUndefined();
  });
});
