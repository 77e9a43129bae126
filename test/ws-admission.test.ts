import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { realtimeProfile } from "./helpers/realtime.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// One admission per WebSocket handshake, for every kind of socket: the key is looked up once, a
// client secret redeemed once, the profile read once, and each candidate list's funds asked once,
// from the upgrade to the end of the socket's first session. Elysia runs a socket route's
// `beforeHandle` twice; admission done there (without a memo around it) would count twice here.

let server: TestServer;
const app = startFakeApp();
let account: { key: string; tenantId: string };

/** What admission asks of the database and the ledger while `run` goes, counted on the server's own objects. */
async function counted(run: () => Promise<unknown>) {
  const { keys, meter, clientSecrets, profiles } = server.ctx;
  // Through the server's view of keys (a warm key costs no database read, a new one one read).
  const keyLookups = spyOn(keys, "authenticate");
  const funds = spyOn(meter, "admit");
  const redeems = spyOn(clientSecrets, "redeem");
  const profileReads = spyOn(profiles, "get");
  try {
    await run();
    return {
      keyLookups: keyLookups.mock.calls.filter(([key]) => key !== undefined).length,
      funds: funds.mock.calls.length,
      redeems: redeems.mock.calls.length,
      profileReads: profileReads.mock.calls.length,
    };
  } finally {
    for (const spy of [keyLookups, funds, redeems, profileReads]) spy.mockRestore();
  }
}

/** Waits for the first event of `type` a socket sends (JSON text frames). */
function firstEvent(ws: WebSocket, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    ws.addEventListener("message", (e) => {
      const event = JSON.parse(String(e.data));
      if (event.type === type) resolve(event);
    });
    ws.addEventListener("close", (e) => reject(new Error(`closed ${e.code} ${e.reason} before ${type}`)));
  });
}

async function closed(ws: WebSocket) {
  if (ws.readyState === WebSocket.CLOSED) return;
  await new Promise((resolve) => ws.addEventListener("close", resolve));
}

beforeAll(async () => {
  server = await startTestServer();
  account = await fundedAccount(server);
});
afterAll(() => stopServerAndFakes(server, app));

describe("one admission per handshake", () => {
  test("/v1/tts: the key once, the funds once, through a whole session", async () => {
    const counts = await counted(async () => {
      const c = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer(account.key));
      c.send({ type: "text", text: "Once." });
      c.send({ type: "close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(rec.audio.length).toBeGreaterThan(0);
    });
    expect(counts).toMatchObject({ keyLookups: 1, funds: 1 });
  });

  test("/v1/stt: the key once, the funds once, through a whole session", async () => {
    const counts = await counted(async () => {
      const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx&audio_format=pcm_16000&commit_strategy=manual"), bearer(account.key));
      c.ws.binaryType = "arraybuffer";
      await c.opened;
      c.ws.send(new Uint8Array(16000));
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
    });
    expect(counts).toMatchObject({ keyLookups: 1, funds: 1 });
  });

  /** One stream-input session, the key in the handshake's headers or in the init frame. */
  async function streamInput(headers: Record<string, string>, init: Record<string, string> = {}) {
    const c = connect(server.wsUrl("/el/v1/text-to-speech/slt/stream-input?model_id=flite&output_format=pcm_16000"), headers);
    c.send({ text: " ", ...init });
    c.send({ text: "Once. " });
    c.send({ text: "" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.at(-1)).toEqual({ isFinal: true });
  }

  test("/el stream-input, key in the handshake: the key once, the funds once", async () => {
    expect(await counted(() => streamInput({ "xi-api-key": account.key }))).toMatchObject({ keyLookups: 1, funds: 1 });
  });

  test("/el stream-input, key in the init frame: that key once, the funds once", async () => {
    expect(await counted(() => streamInput({}, { xi_api_key: account.key }))).toMatchObject({ keyLookups: 1, funds: 1 });
  });

  test("/v1/realtime with a key: the key, the profile once; the funds once per recognizer and voice", async () => {
    const profileId = await realtimeProfile(server, account.key, app.url("/silent"));
    const connected = app.connections.length;
    const counts = await counted(async () => {
      const ws = new WebSocket(server.wsUrl(`/v1/realtime?profile_id=${profileId}`), { headers: bearer(account.key) } as never);
      await firstEvent(ws, "realtime.session.started");
      ws.close();
      await closed(ws);
    });
    expect(counts).toMatchObject({ keyLookups: 1, profileReads: 1, funds: 2 });
    expect(app.connections.length).toBe(connected + 1);
  });

  test("/el conversation with a signed URL: the secret redeemed once, no key, the profile once; the funds once per recognizer and voice", async () => {
    const profileId = await realtimeProfile(server, account.key, app.url("/silent"));
    const res = await fetch(`${server.url}/el/v1/convai/conversation/get-signed-url?agent_id=${profileId}`, { headers: { "xi-api-key": account.key } });
    const { signed_url } = (await res.json()) as { signed_url: string };
    const counts = await counted(async () => {
      const ws = new WebSocket(signed_url);
      await new Promise((resolve) => ws.addEventListener("open", resolve));
      ws.send(JSON.stringify({ type: "conversation_initiation_client_data" }));
      await firstEvent(ws, "conversation_initiation_metadata");
      ws.close();
      await closed(ws);
    });
    expect(counts).toMatchObject({ redeems: 1, keyLookups: 0, profileReads: 1, funds: 2 });
  });

  test("/oai/realtime with a profile as the model: the key, the profile once; the funds once per recognizer and voice", async () => {
    const profileId = await realtimeProfile(server, account.key, app.url("/silent"));
    const counts = await counted(async () => {
      const ws = new WebSocket(server.wsUrl(`/oai/realtime?model=${profileId}`), ["realtime", `oai-insecure-api-key.${account.key}`]);
      await firstEvent(ws, "session.created");
      ws.close();
      await closed(ws);
    });
    expect(counts).toMatchObject({ keyLookups: 1, profileReads: 1, funds: 2 });
  });

  test("/oai/realtime transcription: the key once; the funds once, when the model is named", async () => {
    const counts = await counted(async () => {
      const ws = new WebSocket(server.wsUrl("/oai/realtime?intent=transcription"), ["realtime", `oai-insecure-api-key.${account.key}`]);
      await firstEvent(ws, "session.created");
      const updated = firstEvent(ws, "session.updated");
      ws.send(JSON.stringify({ type: "session.update", session: { type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" } } } } }));
      await updated;
      ws.close();
      await closed(ws);
    });
    expect(counts).toMatchObject({ keyLookups: 1, profileReads: 0, funds: 1 });
  });
});
