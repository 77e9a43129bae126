import { afterAll, describe, expect, test } from "bun:test";
import { type AppSignal, AppSocket, type AppSocketOptions, AppUnavailable, MAX_INVALID_IN_A_ROW } from "../src/realtime/app-socket.ts";
import { conversationRelayWire } from "../src/realtime/app-messages.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { APP_TEST_TLS, serveNamedTls } from "./fakes/named-tls.ts";

// The router's end of the application socket against a ConversationRelay application on loopback:
// setup first, prompts and interrupts in the vocabulary, the application's tokens typed in order,
// every message it cannot take answered with `error`, and each way an application fails named.

const app = startFakeApp();
afterAll(() => app.stop());

const OPTIONS: AppSocketOptions = { allowPrivate: true, connectTimeoutMs: 2000, replyTimeoutMs: 0 };
const SETUP = conversationRelayWire({ sessionId: "rt_1", profileId: "rp_1", customParameters: { plan: "gold" } });

/** Opens a socket to the fake at `path`; its signals collected, and a wait for the next that matches. */
async function open(path: string, options: Partial<AppSocketOptions> = {}) {
  const signals: AppSignal[] = [];
  const waiters: { match: (s: AppSignal) => boolean; resolve: (s: AppSignal) => void }[] = [];
  const socket = await AppSocket.open({ url: app.url(path), headers: { "x-app-key": "k1" } }, SETUP, { ...OPTIONS, ...options }, (signal) => {
    signals.push(signal);
    for (const w of waiters.splice(0)) w.match(signal) ? w.resolve(signal) : waiters.push(w);
  });
  const next = (match: (s: AppSignal) => boolean) => new Promise<AppSignal>((resolve) => (signals.find(match) ? resolve(signals.find(match)!) : waiters.push({ match, resolve })));
  return { socket, signals, next, connection: () => app.connections.at(-1)! };
}

async function until(check: () => boolean) {
  for (let i = 0; i < 100 && !check(); i++) await Bun.sleep(10);
}

describe("the application socket", () => {
  test("says setup first, with the session, the profile, its custom parameters and the profile's headers", async () => {
    const { socket, connection } = await open("/silent");
    await until(() => connection().received.length > 0);
    // Every field of Twilio's setup is there; the call's are empty, as there is no call.
    expect(connection().received[0]).toEqual({
      type: "setup",
      sessionId: "rt_1",
      profileId: "rp_1",
      callSid: "",
      accountSid: "",
      parentCallSid: "",
      from: "",
      to: "",
      forwardedFrom: "",
      callerName: "",
      callType: "",
      callStatus: "",
      direction: "inbound",
      customParameters: { plan: "gold" },
    });
    expect(connection().headers["x-app-key"]).toBe("k1");
    expect(connection().headers.host).toBe(`127.0.0.1:${app.port}`);
    socket.close();
  });

  test("a surface that carries a call fills setup's call fields with it", async () => {
    const call = { callSid: "CA1", from: "+15550100", to: "+15550101", callType: "PSTN", callStatus: "in-progress" };
    const wire = conversationRelayWire({ sessionId: "rt_2", profileId: "rp_1", call });
    const socket = await AppSocket.open({ url: app.url("/silent") }, wire, OPTIONS, () => {});
    await until(() => app.connections.at(-1)!.received.length > 0);
    expect(app.connections.at(-1)!.received[0]).toMatchObject({ type: "setup", sessionId: "rt_2", ...call, accountSid: "", direction: "inbound", customParameters: {} });
    socket.close();
  });

  test("a finished prompt is answered with the application's tokens, in order, the last one last", async () => {
    const { socket, signals, next, connection } = await open("/echo");
    socket.prompt("I would like", false, "en-US");
    socket.prompt("I would like a coffee", true, "en-US");
    await next((s) => s.type === "text" && s.last);
    const texts = signals.filter((s) => s.type === "text");
    expect(texts.map((t) => (t.type === "text" ? t.token : "")).join("")).toBe("You said: I would like a coffee");
    expect(texts.map((t) => t.type === "text" && t.last)).toEqual([false, false, false, false, false, false, true]);
    expect(texts.every((t) => t.type === "text" && t.interruptible === "any" && !t.preemptible)).toBe(true);
    expect(connection().received.slice(1)).toEqual([
      { type: "prompt", voicePrompt: "I would like", lang: "en-US", last: false },
      { type: "prompt", voicePrompt: "I would like a coffee", lang: "en-US", last: true },
    ]);
    socket.interrupt("You said: I would", 812.4);
    await until(() => connection().received.length === 4);
    expect(connection().received[3]).toEqual({ type: "interrupt", utteranceUntilInterrupt: "You said: I would", durationUntilInterruptMs: 812 });
    socket.close();
    await until(() => connection().closed !== undefined);
    expect(connection().closed?.code).toBe(1000);
  });

  test("a key the caller pressed is told as dtmf", async () => {
    const { socket, connection } = await open("/silent");
    socket.dtmf("5");
    await until(() => connection().received.length === 2);
    expect(connection().received[1]).toEqual({ type: "dtmf", digit: "5" });
    socket.close();
  });

  test("end hands its data on", async () => {
    const { socket, next } = await open("/end");
    socket.prompt("that is all", true);
    expect(await next((s) => s.type === "end")).toEqual({ type: "end", handoffData: JSON.stringify({ reason: "done", heard: "that is all" }) });
    socket.close();
  });

  test(`every message outside the vocabulary is answered with error; ${MAX_INVALID_IN_A_ROW} in a row close the application 1008`, async () => {
    const { socket, signals, next, connection } = await open("/malformed");
    socket.prompt("hello", true);
    expect(await next((s) => s.type === "closed")).toEqual({ type: "closed", code: 1008, reason: "too many invalid messages" });
    await until(() => connection().closed !== undefined);
    const errors = connection().received.filter((m) => m.type === "error");
    expect(errors).toHaveLength(MAX_INVALID_IN_A_ROW);
    expect(errors.map((e) => e.description)).toEqual([
      "a frame is not JSON",
      "a frame is a JSON object with a string type",
      "text needs a string token",
      'unknown message type "dance"',
      "play is not supported: the router does not fetch audio from URLs an application names",
      "sendDigits needs digits: 1 to 64 of 0-9, *, #, A-D and w",
      "a frame is a JSON object with a string type",
      'text\'s interruptible is a boolean, "none", "dtmf", "speech" or "any"',
      "end's handoffData is a string",
      "language names a ttsLanguage, a transcriptionLanguage or both, as strings",
    ]);
    // The valid frame after them arrives on a socket the router already closed: it is not taken.
    expect(signals.filter((s) => s.type !== "closed")).toEqual([]);
    expect(connection().closed).toEqual({ code: 1008, reason: "too many invalid messages" });
    socket.close();
  });

  test("Twilio's mid-call config and hints are refused by name: a conversation's settings are its profile's", async () => {
    const { socket, signals, connection } = await open("/configures");
    await until(() => connection().received.length === 3);
    expect(
      connection()
        .received.slice(1)
        .map((m) => m.description),
    ).toEqual(["config is not supported: a conversation's settings are its profile's", "hints is not supported: a conversation's recognizer settings are its profile's"]);
    expect(signals).toEqual([]);
    socket.close();
  });

  test("an application that does not answer a finished prompt in time is reported silent; partials start no clock", async () => {
    const { socket, signals, next } = await open("/silent", { replyTimeoutMs: 150 });
    socket.prompt("are you", false);
    await Bun.sleep(250);
    expect(signals).toEqual([]);
    socket.prompt("are you there", true);
    expect(await next((s) => s.type === "silent")).toEqual({ type: "silent", afterMs: 150 });
    socket.close();
  });

  test("a slow application that answers within the reply timeout is not silent", async () => {
    const { socket, signals, next } = await open("/slow?delay=100", { replyTimeoutMs: 1000 });
    socket.prompt("take your time", true);
    await next((s) => s.type === "text" && s.last);
    await Bun.sleep(1100);
    expect(signals.some((s) => s.type === "silent")).toBe(false);
    socket.close();
  });

  test("an application that closes is reported with its close", async () => {
    const { next } = await open("/closing");
    expect(await next((s) => s.type === "closed")).toEqual({ type: "closed", code: 1000, reason: "goodbye" });
  });
});

describe("an application that cannot be had", () => {
  const failure = (url: string, options: Partial<AppSocketOptions> = {}) =>
    AppSocket.open({ url }, SETUP, { ...OPTIONS, ...options }, () => {}).then(
      () => "connected",
      (err) => (err instanceof AppUnavailable ? err.message : `unexpected ${err}`),
    );

  test("nobody listening: refused, naming the application's host", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    expect(await failure(`ws://127.0.0.1:${port}/voice`)).toBe(`the application at 127.0.0.1:${port} refused the connection`);
  });

  test("an HTTP answer instead of the upgrade: refused", async () => {
    const plain = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no", { status: 403 }) });
    expect(await failure(`ws://127.0.0.1:${plain.port}/voice`)).toBe(`the application at 127.0.0.1:${plain.port} refused the connection`);
    plain.stop(true);
  });

  test("an upgrade that never comes: given up after the connect timeout", async () => {
    const stalled = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    expect(await failure(`ws://127.0.0.1:${stalled.port}/voice`, { connectTimeoutMs: 200 })).toBe(`the application at 127.0.0.1:${stalled.port} did not accept the connection within 200 ms`);
    stalled.stop(true);
  });

  test("a private address without the operator's permission: refused by the guard, nothing connects", async () => {
    const before = app.connections.length;
    expect(await failure(app.url("/echo"), { allowPrivate: false })).toBe("the application URL is a loopback address");
    expect(await failure("wss://app.example/voice", { allowPrivate: false, resolve: async () => [{ address: "10.1.2.3", family: 4 }] })).toBe(
      "the application host app.example resolves to a private address",
    );
    expect(app.connections.length).toBe(before);
  });

  test("over TLS to a checked address, the certificate is checked against the application's own name", async () => {
    const tlsApp = serveNamedTls();
    const resolve = async () => [{ address: "127.0.0.1", family: 4 }];
    const signals: AppSignal[] = [];
    const socket = await AppSocket.open({ url: `wss://${APP_TEST_TLS.name}:${tlsApp.port}/voice` }, SETUP, { ...OPTIONS, resolve, ca: APP_TEST_TLS.cert }, (s) => signals.push(s));
    socket.close();
    expect(await failure(`wss://${APP_TEST_TLS.name}:${tlsApp.port}/voice`, { resolve })).toBe(`the application at ${APP_TEST_TLS.name}:${tlsApp.port} refused the connection`);
    tlsApp.stop(true);
  });
});
