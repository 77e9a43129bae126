import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeApp, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";

// Browsers cannot set an Authorization header on a WebSocket: the native channels take the key as
// the subprotocol `voxroute-key.<key>` too, offered beside `voxroute`, which the upgrade answers with.

let server: TestServer;
let app: FakeApp;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  app = startFakeApp();
  ({ key } = await fundedAccount(server));
});
afterAll(async () => {
  await server.stop(0);
  app.stop();
});

interface Opened {
  protocol: string;
  events: { type: string }[];
  audioBytes: number;
  close: { code: number; reason: string };
}

/** Opens `path` offering `protocols` (and the headers), sends `frames` once open, and records until the close. */
function session(path: string, protocols: string[], frames: unknown[], headers: Record<string, string> = {}): Promise<Opened> {
  const ws = new WebSocket(server.wsUrl(path), { protocols, headers } as any);
  const opened: Opened = { protocol: "", events: [], audioBytes: 0, close: { code: 0, reason: "" } };
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {
    opened.protocol = ws.protocol;
    for (const f of frames) ws.send(JSON.stringify(f));
  };
  ws.onmessage = (e) => {
    if (typeof e.data === "string") {
      const event = JSON.parse(e.data);
      opened.events.push(event);
      if (event.type === "realtime.session.started") ws.send(JSON.stringify({ type: "realtime.session.close" }));
    } else opened.audioBytes += (e.data as ArrayBuffer).byteLength;
  };
  return new Promise((resolve) => {
    ws.onclose = (e) => resolve({ ...opened, close: { code: e.code, reason: e.reason } });
  });
}

const SPEAK = [{ type: "text", text: "Keys in subprotocols." }, { type: "close" }];

describe("the key as a WebSocket subprotocol", () => {
  test("/v1/tts: the session speaks, and the upgrade names `voxroute`", async () => {
    const s = await session("/v1/tts?model=flite&voice=slt", ["voxroute", `voxroute-key.${key}`], SPEAK);
    expect(s.protocol).toBe("voxroute");
    expect(s.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(s.audioBytes).toBeGreaterThan(10_000);
  });

  test("/v1/tts: an unknown key there closes 4401, as in the header", async () => {
    const s = await session("/v1/tts?model=flite&voice=slt", ["voxroute", "voxroute-key.vxr_unknown"], SPEAK);
    expect(s.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
  });

  test("/v1/tts: the Authorization header wins over a subprotocol", async () => {
    const s = await session("/v1/tts?model=flite&voice=slt", ["voxroute", "voxroute-key.vxr_unknown"], SPEAK, bearer(key));
    expect(s.close.code).toBe(1000);
  });

  test.skipIf(!localSttAvailable)("/v1/stt: the session starts", async () => {
    const s = await session("/v1/stt?model=pocketsphinx&audio_format=pcm_16000", ["voxroute", `voxroute-key.${key}`], [{ type: "stt.session.close" }]);
    expect(s.protocol).toBe("voxroute");
    expect(s.events[0]?.type).toBe("stt.session.started");
    expect(s.close.code).toBe(1000);
  });

  test.skipIf(!localSttAvailable)("/v1/realtime: a profile opened with profile_id and the key in a subprotocol", async () => {
    const res = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ name: "echo", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url("/echo") } } }),
    });
    const { id } = (await res.json()) as { id: string };
    const s = await session(`/v1/realtime?profile_id=${id}`, ["voxroute", `voxroute-key.${key}`], []);
    expect(s.protocol).toBe("voxroute");
    expect(s.events.map((e) => e.type)).toContain("realtime.session.started");
    expect(s.close.code).toBe(1000);
  });
});
