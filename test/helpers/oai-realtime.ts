import { afterAll, beforeAll, expect } from "bun:test";
import OpenAI from "openai";
import { type FakeApp, startFakeApp } from "../fakes/conversation-relay-app.ts";
import { APP_TEST_TLS } from "../fakes/named-tls.ts";
import { startTestServer, type TestServer } from "./server.ts";
import { tlsFront } from "./tls-front.ts";

// What the /oai/realtime tests share: the router behind a wss:// front (the OpenAI SDK speaks only
// wss), SDK clients that reach it there, and a recorder of any realtime client's events.

export interface FrontedServer {
  server: TestServer;
  front: ReturnType<typeof tlsFront>;
}

/** The socket options an SDK realtime client needs to trust the front's app.test certificate. */
export const FRONT_TLS = { ca: APP_TEST_TLS.cert, servername: APP_TEST_TLS.name };

export async function startServerBehindTlsFront(): Promise<FrontedServer> {
  const server = await startTestServer();
  return { server, front: tlsFront(server.wsUrl("")) };
}

/** Stops the front, waits for the router's sessions to end (failing the test file if one never does), stops the router. */
export async function stopServerBehindTlsFront({ server, front }: FrontedServer) {
  front.stop(true);
  for (let i = 0; i < 100 && server.ctx.sessions.size > 0; i++) await Bun.sleep(20);
  expect(server.ctx.sessions.size).toBe(0);
  await server.stop(0);
}

/** For a test file: the router behind its front, and a ConversationRelay application for its profiles; started before the file's tests, stopped after. */
export function frontedServerWithApp(): FrontedServer & { app: FakeApp } {
  const fixture = { app: startFakeApp() } as FrontedServer & { app: FakeApp };
  beforeAll(async () => void Object.assign(fixture, await startServerBehindTlsFront()));
  afterAll(async () => {
    await stopServerBehindTlsFront(fixture);
    fixture.app.stop();
  });
  return fixture;
}

/** The types of a caller's turn, in OpenAI's order: speech, commit, the user item, its transcription (one delta). */
export const USER_TURN_EVENTS = [
  "input_audio_buffer.speech_started",
  "input_audio_buffer.speech_stopped",
  "input_audio_buffer.committed",
  "conversation.item.added",
  "conversation.item.done",
  "conversation.item.input_audio_transcription.delta",
  "conversation.item.input_audio_transcription.completed",
];

/** The types that end an answer, in OpenAI's order, whether it was spoken to its end or cut while it was made. */
export const ANSWER_DONE_EVENTS = [
  "response.output_audio.done",
  "response.output_audio_transcript.done",
  "response.content_part.done",
  "response.output_item.done",
  "conversation.item.done",
  "response.done",
];

/** An OpenAI SDK client with `apiKey` whose realtime sockets go through the front. */
export const sdkThroughFront = (front: FrontedServer["front"], apiKey: string) => new OpenAI({ apiKey, baseURL: `https://127.0.0.1:${front.port}/oai` });

/** Any realtime client, as its events come. */
export function recorder(client: { on(event: "event" | "error", f: (ev: unknown) => void): unknown; send(ev: never): void }) {
  const events: Record<string, any>[] = [];
  client.on("event", (ev) => events.push(ev as never));
  client.on("error" as never, () => {}); // error events are recorded as events; without a listener the SDK throws them
  /** Bytes as `input_audio_buffer.append`s of 100 ms, in real time. */
  const append = async (bytes: Uint8Array, bytesPer100ms: number) => {
    for (let at = 0; at < bytes.byteLength; at += bytesPer100ms) {
      client.send({ type: "input_audio_buffer.append", audio: Buffer.from(bytes.subarray(at, at + bytesPer100ms)).toString("base64") } as never);
      await Bun.sleep(100);
    }
  };
  return { events, append, of: (type: string) => events.filter((e) => e.type === type) };
}
