import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeApp, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
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

// A key in a response header ends up in every proxy's log: the upgrade never names a subprotocol
// that carries one, whatever the answer (101, a refusal before the upgrade, a key that is not valid).
describe("the upgrade's answer never carries the key", () => {
  const UNKNOWN = "vxr_unknownKeyThatMustNotComeBack";
  let profileId: string;
  beforeAll(async () => {
    const res = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ name: "echo", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url("/echo") } } }),
    });
    expect(res.status).toBe(201);
    ({ id: profileId } = (await res.json()) as { id: string });
  });

  /** The upgrade's answer to `path` offering `protocols`, and the header lines that hold `secret`. */
  async function offer(path: string, protocols: string[], secret: string) {
    const answer = await upgradeRequest(server.wsUrl(path).replace(/^ws/, "http"), { "Sec-WebSocket-Protocol": protocols.join(", ") });
    const leaks = [...answer.headers].filter(([, value]) => value.includes(secret));
    return { status: answer.status, protocol: answer.headers.get("sec-websocket-protocol"), leaks };
  }

  const routes = [
    { name: "/v1/tts", path: "/v1/tts?model=flite&voice=slt", refused: "/v1/tts?model=flite&voice=nobody", plain: "voxroute", prefixes: ["voxroute-key."] },
    { name: "/v1/stt", path: "/v1/stt?model=pocketsphinx&audio_format=pcm_16000", refused: "/v1/stt?model=pocketsphinx&audio_format=opus_9", plain: "voxroute", prefixes: ["voxroute-key."] },
    { name: "/v1/realtime", path: () => `/v1/realtime?profile_id=${profileId}`, refused: "/v1/realtime", plain: "voxroute", prefixes: ["voxroute-key."] },
    {
      name: "/oai/realtime",
      path: "/oai/realtime?intent=transcription",
      refused: "/oai/realtime?model=no-such-profile",
      plain: "realtime",
      prefixes: ["openai-insecure-api-key.", "oai-insecure-api-key."],
    },
  ];

  for (const route of routes) {
    const pathOf = () => (typeof route.path === "string" ? route.path : route.path());
    for (const prefix of route.prefixes) {
      test.skipIf(!localSttAvailable)(`${route.name}, ${prefix}<key> offered alone: 101 naming no subprotocol, for a valid key and an unknown one`, async () => {
        expect(await offer(pathOf(), [`${prefix}${key}`], key)).toEqual({ status: 101, protocol: null, leaks: [] });
        expect(await offer(pathOf(), [`${prefix}${UNKNOWN}`], UNKNOWN)).toEqual({ status: 101, protocol: null, leaks: [] });
      });

      test(`${route.name}, ${prefix}<key> offered alone: a refusal before the upgrade is 400 without it`, async () => {
        expect(await offer(route.refused, [`${prefix}${key}`], key)).toEqual({ status: 400, protocol: null, leaks: [] });
      });
    }

    test.skipIf(!localSttAvailable)(`${route.name}: offered beside the key, \`${route.plain}\` is the answer; after a key, another plain subprotocol is`, async () => {
      const [prefix] = route.prefixes;
      expect(await offer(pathOf(), [`${prefix}${key}`, route.plain], key)).toEqual({ status: 101, protocol: route.plain, leaks: [] });
      expect(await offer(pathOf(), [`${prefix}${key}`, "chat"], key)).toEqual({ status: 101, protocol: "chat", leaks: [] });
    });
  }
});
