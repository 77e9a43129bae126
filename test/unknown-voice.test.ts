import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { eq } from "drizzle-orm";
import OpenAI from "openai";
import type { TtsStreamRequest } from "../src/providers/types.ts";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A voice the catalogue knows nobody has is the client's mistake: 400 `invalid_request` with
// `param: "voice"` before any upgrade, hold or engine work, never a 502 the SDKs retry. Driven by
// the official SDKs with their default retries, counting the requests that reach the server.

/** A test provider that lists its voices, remembering what it was asked to open. */
class ListedProvider extends FixedPcmProvider {
  readonly voicesAsked: (string | undefined)[] = [];
  constructor(
    id: string,
    private readonly names: string[],
  ) {
    super(id, 2);
  }
  override open(req: TtsStreamRequest) {
    this.voicesAsked.push(req.voice);
    return super.open(req);
  }
  async voiceNames() {
    return new Set(this.names);
  }
}

const alpha = new ListedProvider("listed-alpha", ["alpha"]);
const beta = new ListedProvider("listed-beta", ["beta"]);
const unlisted = new FixedPcmProvider("unlisted", 2);
const refusing = new BrokenProvider("refuses-voice", "reject-voice");

let server: TestServer;
beforeAll(async () => {
  const catalogue = testCatalogue(["listed-alpha", "listed-beta", "unlisted", "refuses-voice"]);
  server = await startTestServer({}, { extra: { catalogue, providers: [alpha, beta, unlisted, refusing] } });
});
afterAll(() => server.stop(0));

/** A `fetch` for an SDK that counts the requests it sends (each one reaches the server). */
function countingFetch() {
  const counter = {
    requests: 0,
    fetch: ((...args: Parameters<typeof fetch>) => {
      counter.requests++;
      return fetch(...args);
    }) as typeof fetch,
  };
  return counter;
}

/** The WebSocket handshake as a plain request: the answer a refused upgrade gets. */
async function upgrade(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers },
  });
  return { status: res.status, retry: res.headers.get("x-should-retry"), body: (await res.json()) as Record<string, any> };
}

async function activityCount(tenantId: string): Promise<number> {
  const { db, schema } = server.ctx.database;
  return (await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId))).length;
}

const ENGINES = [
  { model: "flite", voice: "nobody", provider: "flite" },
  { model: "pico", voice: "xx-XX", provider: "svox-pico" },
  { model: "espeak-ng", voice: "zz-nope", provider: "espeak-ng" },
];

describe("an unknown voice on an embedded engine is refused before any work, once", () => {
  for (const { model, voice, provider } of ENGINES) {
    test(`/oai with the OpenAI SDK (${provider}): BadRequestError, param voice, one request, nothing recorded`, async () => {
      const { key, tenantId } = await fundedAccount(server);
      const counter = countingFetch();
      const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, fetch: counter.fetch }); // default retries
      const err = await client.audio.speech.create({ model, voice, input: "Hello there." }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err).toMatchObject({ status: 400, code: "invalid_request", param: "voice", type: "invalid_request_error" });
      expect(err.message).toContain(`voice "${voice}" is not a voice of ${provider}`);
      expect(err.headers.get("x-should-retry")).toBe("false");
      expect(counter.requests).toBe(1);
      expect(await activityCount(tenantId)).toBe(0);
    });
  }

  test("/el with the ElevenLabs SDK: 400 {detail} with param voice, one request; stream-input refused before the upgrade", async () => {
    const counter = countingFetch();
    const client = new ElevenLabsClient({ apiKey: server.key, baseUrl: `${server.url}/el`, fetch: counter.fetch }); // default retries
    const err = (await client.textToSpeech.convert("nobody", { text: "Hello there.", modelId: "flite", outputFormat: "pcm_16000" }).catch((e) => e)) as ElevenLabsError;
    expect(err).toBeInstanceOf(ElevenLabsError);
    expect(err.statusCode).toBe(400);
    expect(err.body).toEqual({ detail: { message: 'voice "nobody" is not a voice of flite', status: "invalid_request", param: "voice", request_id: expect.any(String) } });
    expect(counter.requests).toBe(1);

    const ws = await upgrade("/el/v1/text-to-speech/nobody/stream-input?model_id=flite", { "xi-api-key": server.key });
    expect(ws).toEqual({
      status: 400,
      retry: "false",
      body: { detail: { message: 'voice "nobody" is not a voice of flite', status: "invalid_request", param: "voice", request_id: expect.any(String) } },
    });
  });

  test("native /v1/tts: 400 before the upgrade in the flat envelope with param voice; a WebSocket client never opens", async () => {
    const refused = await upgrade("/v1/tts?model=espeak-ng&voice=zz-nope", bearer(server.key));
    expect(refused).toEqual({
      status: 400,
      retry: "false",
      body: { error: "invalid_request", message: 'voice "zz-nope" is not a voice of espeak-ng', param: "voice", request_id: expect.any(String) },
    });

    const c = connect(server.wsUrl("/v1/tts?model=flite&voice=nobody"), bearer(server.key));
    const opened = await c.opened.then(
      () => true,
      () => false,
    );
    expect(opened).toBe(false);
  });

  test("the engines' other spellings still work: eSpeak NG by language, Flite with no voice", async () => {
    for (const query of ["model=espeak-ng&voice=en-us", "model=espeak-ng&voice=gmw/en-US", "model=flite"]) {
      const c = connect(server.wsUrl(`/v1/tts?${query}`), bearer(server.key));
      c.send({ type: "text", text: "Fine." });
      c.send({ type: "close" });
      expect((await c.closed).close.code).toBe(1000);
    }
  });
});

describe("routing with fallbacks: a voice no allowed candidate takes is 400; a candidate that lacks it is skipped", () => {
  const speak = async (query: string) => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&${query}`), bearer(key));
    c.send({ type: "text", text: "Twelve chars" });
    c.send({ type: "close" });
    return { rec: await c.closed, tenantId };
  };

  test("unknown to the first candidate, known to a later one: the later one serves; the first is never opened", async () => {
    const before = alpha.voicesAsked.length;
    const { rec, tenantId } = await speak("voice=beta&provider_order=listed-alpha,listed-beta");
    expect(rec.close.code).toBe(1000);
    // The first attempt (alpha is skipped, not tried) connected at once: it is told by the audio's start, not provider_status.
    expect(rec.events.filter((e) => e.type === "service.tts_provider_status")).toEqual([]);
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "listed-beta" });
    expect(alpha.voicesAsked.length).toBe(before);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "listed-beta", status: "completed" });
  });

  test("a provider that cannot list its voices stays a candidate, and its own answer decides", async () => {
    const { rec } = await speak("voice=gamma&provider_only=listed-alpha,unlisted");
    expect(rec.close.code).toBe(1000);
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ provider: "unlisted" });
  });

  for (const [why, query, names] of [
    ["no candidate takes it", "voice=gamma&provider_only=listed-alpha,listed-beta", "listed-alpha, listed-beta"],
    ["the one that does is excluded by provider_only", "voice=beta&provider_only=listed-alpha", "listed-alpha"],
    ["allow_fallbacks=false leaves only the first, which lacks it", "voice=beta&provider_order=listed-alpha,listed-beta&allow_fallbacks=false", "listed-alpha"],
  ]) {
    test(`400 before the upgrade when ${why}`, async () => {
      expect(await upgrade(`/v1/tts?model=${TEST_MODEL}&${query}`, bearer(server.key))).toEqual({
        status: 400,
        retry: "false",
        body: { error: "invalid_request", message: `voice "${query.match(/voice=(\w+)/)![1]}" is not a voice of ${names}`, param: "voice", request_id: expect.any(String) },
      });
    });
  }

  test("a provider that refuses the voice itself: /oai 400 param voice, not a 502 the SDK retries; no other candidate tried", async () => {
    const counter = countingFetch();
    const client = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/oai`, fetch: counter.fetch });
    const before = refusing.opened;
    const err = await client.audio.speech
      .create({ model: TEST_MODEL, voice: "whoever", input: "Hello.", response_format: "pcm", provider: { order: ["refuses-voice", "unlisted"] } } as never)
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, code: "invalid_request", param: "voice" });
    expect(counter.requests).toBe(1);
    expect(refusing.opened).toBe(before + 1);
  });
});
