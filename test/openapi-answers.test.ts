import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_ELEVENLABS_KEY, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { writeLimits } from "../src/limits/limit-values.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { answerOf, documentedAnswers } from "./helpers/documented-answer.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { speak, wavFile } from "./helpers/speech.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";

// Real requests to every surface, successes and failures, each answer checked against the
// OpenAPI document the server serves: status, media type, headers, and the JSON body against the
// documented schema with every object closed (helpers/documented-answer.ts).

const elevenlabs = startFakeElevenLabs();
let server: TestServer;
let mismatches: ReturnType<typeof documentedAnswers>;
let key: string;
beforeAll(async () => {
  server = await startTestServer({ ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY, ELEVENLABS_BASE_URL: elevenlabs.url, CUSTOM_VOICE_POLL_MS: "50", SANDBOX_PAYMENTS: "true" });
  mismatches = documentedAnswers((await (await fetch(`${server.url}/openapi.json`)).json()) as Record<string, unknown>);
  key = server.key;
});
afterAll(async () => {
  await server.stop(0);
  elevenlabs.stop();
});

const bearer = (k = key) => ({ authorization: `Bearer ${k}` });
const jsonHeaders = (k = key) => ({ ...bearer(k), "content-type": "application/json" });
const post = (body: unknown, k = key) => ({ method: "POST", headers: jsonHeaders(k), body: JSON.stringify(body) });
const recording = () => new File([wavFile(speak("Thank you very much for your help."))], "speech.wav", { type: "audio/wav" });
function form(fields: Record<string, string>, files: Record<string, File> = { file: recording() }): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [k, v] of Object.entries(files)) f.append(k, v);
  return f;
}

/** Each request of `cases` ([method, path as sent, documented template, init]) in turn; what did not match the document. */
async function check(cases: [string, string, string, RequestInit?][]): Promise<string[]> {
  const found: string[] = [];
  for (const [method, path, template, init] of cases) {
    const res = await fetch(`${server.url}${path}`, { method, redirect: "manual", ...init });
    found.push(...mismatches(await answerOf(res), method, template));
  }
  return found;
}

/** The JSON of a request that must succeed. */
async function made<T>(path: string, init: RequestInit): Promise<T> {
  const res = await fetch(`${server.url}${path}`, init);
  expect(res.ok).toBe(true);
  return (await res.json()) as T;
}

describe("answers are as the document says", () => {
  test("catalogue, operations and the WebSocket handshakes' plain GETs", async () => {
    const found = await check([
      ["GET", "/v1/providers", "/v1/providers"],
      ["GET", "/v1/models", "/v1/models"],
      ["GET", "/v1/voices?q=english&limit=3&include_facets=true", "/v1/voices"],
      ["GET", "/v1/voices?limit=1", "/v1/voices", { headers: bearer() }],
      ["GET", "/v1/voices?limit=1000", "/v1/voices"],
      ["GET", "/v1/voices", "/v1/voices", { headers: bearer("vxr_nobody") }],
      ["GET", "/v1/voices/preview?model=cmu/flite&voice=slt", "/v1/voices/preview"],
      ["GET", "/v1/voices/preview?model=cmu/flite&voice=nobody", "/v1/voices/preview"],
      ["GET", "/healthz", "/healthz"],
      ["GET", "/metrics", "/metrics"],
      ["GET", "/openapi.json", "/openapi.json"],
      ["GET", "/v1/tts?model=flite", "/v1/tts"],
      ["GET", "/v1/stt?model=pocketsphinx&audio_format=pcm_16000", "/v1/stt"],
      ["GET", "/v1/realtime?profile_id=rp_x", "/v1/realtime"],
      ["GET", "/el/v1/text-to-speech/slt/stream-input?model_id=flite", "/el/v1/text-to-speech/{voice_id}/stream-input"],
      ["GET", "/oai/realtime", "/oai/realtime", { headers: bearer() }],
      ["GET", "/el/v1/convai/conversation?agent_id=rp_x", "/el/v1/convai/conversation", { headers: bearer() }],
    ]);
    expect(found).toEqual([]);
  }, 30_000);

  test("account, payments, realtime profiles and secrets", async () => {
    const profile = await made<{ id: string }>(
      "/v1/realtime/profiles",
      post({ name: "desk", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: "wss://app.example/voice" } } }),
    );
    const link = await made<{ url: string }>("/account/top-up-link", post({ amount_usd: 5 }));
    const minted = await made<{ key_prefix: string }>("/account/keys", post({}));
    const checkout = new URL(link.url).pathname;
    const found = await check([
      ["POST", "/account/agent-signup", "/account/agent-signup", post({ email: "ada@example.com" })],
      ["POST", "/account/agent-signup", "/account/agent-signup", post({ email: "not an address" })],
      ["POST", "/account/agent-signup/verify", "/account/agent-signup/verify", post({ email: "ada@example.com", code: "000000" })],
      ["GET", "/account/balance", "/account/balance", { headers: bearer() }],
      ["GET", "/account/balance", "/account/balance"],
      ["GET", "/account/balance", "/account/balance", { headers: bearer("vxr_nobody") }],
      ["GET", "/account/activity?limit=5", "/account/activity", { headers: bearer() }],
      ["GET", "/account/activity?limit=500", "/account/activity", { headers: bearer() }],
      ["GET", "/account/usage", "/account/usage", { headers: bearer() }],
      ["GET", "/account/transactions", "/account/transactions", { headers: bearer() }],
      ["POST", "/account/top-up-link", "/account/top-up-link", post({ amount_usd: 25 })],
      ["POST", "/account/top-up-link", "/account/top-up-link", post({ amount_usd: 1 })],
      ["GET", "/account/top-up-return?status=paid", "/account/top-up-return"],
      ["GET", "/account/keys", "/account/keys", { headers: bearer() }],
      ["POST", "/account/keys", "/account/keys", post({})],
      ["POST", "/account/keys", "/account/keys", post({ name: "ci" })],
      ["POST", "/account/keys", "/account/keys", post({ usd_per_day: 2, usd_per_month: null, max_sessions: 3 })],
      ["POST", "/account/keys", "/account/keys", post({ usd_per_day: -2 })],
      ["GET", "/account/limits", "/account/limits", { headers: bearer() }],
      ["GET", "/account/limits?x=1", "/account/limits", { headers: bearer() }],
      ["DELETE", `/account/keys/${minted.key_prefix}`, "/account/keys/{key}", { method: "DELETE", headers: bearer() }],
      ["DELETE", `/account/keys/${minted.key_prefix}`, "/account/keys/{key}", { method: "DELETE", headers: bearer() }],
      ["GET", checkout, "/sandbox/checkout/{id}"],
      ["POST", `${checkout}/complete`, "/sandbox/checkout/{id}/complete"],
      ["GET", "/sandbox/checkout/sbx_nothing", "/sandbox/checkout/{id}"],
      ["GET", `/v1/realtime/profiles/${profile.id}`, "/v1/realtime/profiles/{profile_id}", { headers: bearer() }],
      ["GET", "/v1/realtime/profiles/rp_nothing", "/v1/realtime/profiles/{profile_id}", { headers: bearer() }],
      ["POST", "/v1/realtime/profiles", "/v1/realtime/profiles", post({ name: "x", pipeline: { stt: { model: "flite" }, tts: { model: "flite" }, upstream: { url: "wss://app.example" } } })],
      ["POST", "/v1/realtime/client-secrets", "/v1/realtime/client-secrets", post({ profile_id: profile.id, expires_in: 30 })],
      ["POST", "/v1/realtime/client-secrets", "/v1/realtime/client-secrets", post({})],
    ]);
    expect(found).toEqual([]);
  }, 30_000);

  test("cloned voices, natively and through /el", async () => {
    const clone = (fields: Record<string, string>) => ({ method: "POST", headers: bearer(), body: form(fields, { files: recording() }) });
    const voice = await made<{ id: string }>("/v1/custom-voices", clone({ name: "Ada", provider: "elevenlabs" }));
    const elVoice = await made<{ voice_id: string }>("/el/v1/voices/add", clone({ name: "Grace" }));
    const id = encodeURIComponent(voice.id);
    const found = await check([
      ["POST", "/v1/custom-voices", "/v1/custom-voices", clone({ name: "Lin", provider: "elevenlabs" })],
      ["POST", "/v1/custom-voices", "/v1/custom-voices", clone({ name: "Lin", provider: "flite" })],
      ["GET", "/v1/custom-voices", "/v1/custom-voices", { headers: bearer() }],
      ["GET", `/v1/custom-voices/${id}`, "/v1/custom-voices/{voice_id}", { headers: bearer() }],
      ["DELETE", `/v1/custom-voices/${id}`, "/v1/custom-voices/{voice_id}", { method: "DELETE", headers: bearer() }],
      ["GET", `/v1/custom-voices/${id}`, "/v1/custom-voices/{voice_id}", { headers: bearer() }],
      ["POST", "/el/v1/voices/add", "/el/v1/voices/add", clone({ name: "Ida" })],
      ["GET", "/el/v2/voices?page_size=2&category=cloned", "/el/v2/voices", { headers: bearer() }],
      ["GET", "/el/v2/voices?page_size=0", "/el/v2/voices", { headers: bearer() }],
      ["GET", "/el/v1/voices", "/el/v1/voices", { headers: bearer() }],
      ["GET", "/el/v1/voices/slt", "/el/v1/voices/{voice_id}", { headers: bearer() }],
      ["GET", `/el/v1/voices/${elVoice.voice_id}`, "/el/v1/voices/{voice_id}", { headers: bearer() }],
      ["GET", "/el/v1/voices/nobody", "/el/v1/voices/{voice_id}", { headers: bearer() }],
      ["DELETE", `/el/v1/voices/${elVoice.voice_id}`, "/el/v1/voices/{voice_id}", { method: "DELETE", headers: bearer() }],
    ]);
    expect(found).toEqual([]);
  }, 60_000);

  test("speech on every surface, and what an empty account is told", async () => {
    const { key: broke } = await fundedAccount(server, 0);
    const spent = await fundedAccount(server);
    await writeLimits(server.ctx.database.sql, spent.tenantId, undefined, { usd_per_day: 0 });
    const speech = { model: "flite", voice: "slt", input: "Hello there." };
    const el = (k: string, body: unknown = { text: "Hello there.", model_id: "flite" }) => post(body, k);
    const found = await check([
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post(speech)],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post({ ...speech, response_format: "wav" })],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post({ ...speech, response_format: "aac" })],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post({ ...speech, stream_format: "sse" })],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post({ input: "Hello." })],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post(speech, "vxr_nobody")],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post(speech, broke)],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post(speech, spent.key)],
      ["POST", "/oai/audio/speech", "/oai/audio/speech", post({ ...speech, input: "x".repeat(5000) })],
      ["POST", "/el/v1/text-to-speech/slt?output_format=pcm_16000", "/el/v1/text-to-speech/{voice_id}", el(key)],
      ["POST", "/el/v1/text-to-speech/slt/stream", "/el/v1/text-to-speech/{voice_id}/stream", el(key)],
      ["POST", "/el/v1/text-to-speech/slt/with-timestamps", "/el/v1/text-to-speech/{voice_id}/with-timestamps", el(key)],
      ["POST", "/el/v1/text-to-speech/slt/stream/with-timestamps?output_format=pcm_16000", "/el/v1/text-to-speech/{voice_id}/stream/with-timestamps", el(key)],
      ["POST", "/el/v1/text-to-speech/slt/stream/with-timestamps", "/el/v1/text-to-speech/{voice_id}/stream/with-timestamps", el(key, { text: "Hi." })],
      ["POST", "/el/v1/text-to-speech/slt/stream?output_format=flac_44100", "/el/v1/text-to-speech/{voice_id}/stream", el(key)],
      ["POST", "/el/v1/text-to-speech/slt", "/el/v1/text-to-speech/{voice_id}", { method: "POST", body: "{}" }],
      ["POST", "/el/v1/text-to-speech/slt", "/el/v1/text-to-speech/{voice_id}", el("vxr_nobody")],
      ["POST", "/el/v1/text-to-speech/slt", "/el/v1/text-to-speech/{voice_id}", el(broke)],
      ["POST", "/el/v1/text-to-speech/slt", "/el/v1/text-to-speech/{voice_id}", el(spent.key)],
      ["POST", "/el/v1/text-to-speech/slt", "/el/v1/text-to-speech/{voice_id}", el(key, { text: "Hi." })],
      ["GET", "/el/v1/models", "/el/v1/models", { headers: { "xi-api-key": key } }],
      ["GET", "/el/v1/user", "/el/v1/user", { headers: { "xi-api-key": key } }],
      ["GET", "/el/v1/user/subscription", "/el/v1/user/subscription", { headers: { "xi-api-key": broke } }],
      ["GET", "/oai/models", "/oai/models", { headers: bearer() }],
      ["GET", "/oai/models/flite%2Fflite", "/oai/models/{model}", { headers: bearer() }],
      ["GET", "/oai/models/nothing", "/oai/models/{model}", { headers: bearer() }],
      ["GET", "/oai/models", "/oai/models"],
    ]);
    expect(found).toEqual([]);
  }, 60_000);

  test.skipIf(!localSttAvailable)(
    "file transcription on every surface",
    async () => {
      const found = await check([
        ["POST", "/v1/stt/transcriptions", "/v1/stt/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx" }) }],
        ["POST", "/v1/stt/transcriptions?model=pocketsphinx", "/v1/stt/transcriptions", { method: "POST", headers: { ...bearer(), "content-type": "audio/wav" }, body: recording() }],
        ["POST", "/v1/stt/transcriptions", "/v1/stt/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx" }, {}) }],
        ["POST", "/oai/audio/transcriptions", "/oai/audio/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx" }) }],
        ["POST", "/oai/audio/transcriptions", "/oai/audio/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx", response_format: "verbose_json" }) }],
        ["POST", "/oai/audio/transcriptions", "/oai/audio/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx", response_format: "vtt" }) }],
        ["POST", "/oai/audio/transcriptions", "/oai/audio/transcriptions", { method: "POST", headers: bearer(), body: form({ model: "pocketsphinx", stream: "true" }) }],
        ["POST", "/oai/audio/transcriptions", "/oai/audio/transcriptions", { method: "POST", headers: bearer(), body: form({}) }],
        ["POST", "/el/v1/speech-to-text", "/el/v1/speech-to-text", { method: "POST", headers: { "xi-api-key": key }, body: form({ model_id: "pocketsphinx" }) }],
        ["POST", "/el/v1/speech-to-text", "/el/v1/speech-to-text", { method: "POST", headers: { "xi-api-key": key }, body: form({ model_id: "pocketsphinx", diarise: "true" }) }],
      ]);
      expect(found).toEqual([]);
    },
    60_000,
  );

  test("Speech Engines, signed URLs and OpenAI's ephemeral keys", async () => {
    const engine = await made<{ speech_engine_id: string }>(
      "/el/v1/speech-engine",
      post({ name: "support", speech_engine: { ws_url: "wss://app.example/voice" }, service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", voice_id: "slt" } } }),
    );
    const id = engine.speech_engine_id;
    const found = await check([
      ["GET", `/el/v1/speech-engine/${id}`, "/el/v1/speech-engine/{speech_engine_id}", { headers: { "xi-api-key": key } }],
      ["GET", "/el/v1/speech-engine/rp_nothing", "/el/v1/speech-engine/{speech_engine_id}", { headers: { "xi-api-key": key } }],
      ["POST", "/el/v1/speech-engine", "/el/v1/speech-engine", post({ speech_engine: { ws_url: "wss://app.example" } })],
      ["GET", `/el/v1/convai/conversation/get-signed-url?agent_id=${id}`, "/el/v1/convai/conversation/get-signed-url", { headers: { "xi-api-key": key } }],
      ["GET", "/el/v1/convai/conversation/get-signed-url", "/el/v1/convai/conversation/get-signed-url", { headers: { "xi-api-key": key } }],
      ["POST", "/oai/realtime/client_secrets", "/oai/realtime/client_secrets", post({ session: { type: "realtime", model: id } })],
      [
        "POST",
        "/oai/realtime/client_secrets",
        "/oai/realtime/client_secrets",
        post({ session: { type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" } } } }, expires_after: { anchor: "created_at", seconds: 60 } }),
      ],
      ["POST", "/oai/realtime/client_secrets", "/oai/realtime/client_secrets", post({ session: { type: "realtime", model: "rp_nothing" } })],
    ]);
    expect(found).toEqual([]);
  }, 30_000);
});

test("WebSocket handshakes: the upgrade (101) and the refusals before it", async () => {
  const { key: broke } = await fundedAccount(server, 0);
  const profile = await made<{ id: string }>(
    "/v1/realtime/profiles",
    post({ name: "desk", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: "flite" }, upstream: { url: "wss://app.example/voice" } } }, broke),
  );
  const cases: [string, string, Record<string, string>?][] = [
    ["/v1/tts?model=flite", "/v1/tts", bearer()],
    ["/v1/tts?model=nothing", "/v1/tts"],
    ["/v1/tts?model=flite&format=wav", "/v1/tts"],
    ["/v1/tts?model=flite&alignment=yes", "/v1/tts"],
    ["/v1/tts?model=flite", "/v1/tts", bearer(broke)],
    ["/v1/stt?model=pocketsphinx", "/v1/stt"],
    ["/v1/stt?model=pocketsphinx&audio_format=pcm_16000&nonsense=1", "/v1/stt"],
    ["/v1/realtime", "/v1/realtime"],
    ["/v1/realtime?profile_id=rp_nothing", "/v1/realtime", bearer()],
    [`/v1/realtime?profile_id=${profile.id}`, "/v1/realtime", bearer(broke)],
    ["/el/v1/text-to-speech/slt/stream-input", "/el/v1/text-to-speech/{voice_id}/stream-input"],
    ["/el/v1/text-to-speech/slt/stream-input?model_id=flite&output_format=wav_16000", "/el/v1/text-to-speech/{voice_id}/stream-input"],
    ["/el/v1/text-to-speech/slt/stream-input?model_id=flite", "/el/v1/text-to-speech/{voice_id}/stream-input", { "xi-api-key": broke }],
    ["/oai/realtime?model=rp_nothing", "/oai/realtime", bearer()],
    ["/el/v1/convai/conversation", "/el/v1/convai/conversation"],
    ["/el/v1/convai/conversation?agent_id=rp_nothing", "/el/v1/convai/conversation", { "xi-api-key": key }],
  ];
  const found: string[] = [];
  const statuses: number[] = [];
  for (const [path, template, headers] of cases) {
    const answer = await upgradeRequest(`${server.url}${path}`, headers);
    statuses.push(answer.status);
    found.push(...mismatches(answer, "GET", template));
  }
  expect(found).toEqual([]);
  expect(statuses).toEqual([101, 400, 400, 400, 402, 400, 400, 400, 404, 402, 400, 400, 402, 400, 400, 404]);
});

test("the check can fail: an undocumented status, media type or field is reported", async () => {
  const undocumented = mismatches(await answerOf(Response.json({ error: "not_found", message: "x" }, { status: 404 })), "GET", "/v1/models");
  expect(undocumented).toEqual([expect.stringContaining("status not documented")]);
  const wrongType = mismatches(await answerOf(new Response("hi", { headers: { "content-type": "text/plain", "x-request-id": "r" } })), "GET", "/v1/models");
  expect(wrongType).toEqual([expect.stringContaining("content-type text/plain")]);
  const extraField = mismatches(await answerOf(Response.json({ tts: [], stt: [], extra: 1 }, { headers: { "x-request-id": "r" } })), "GET", "/v1/models");
  expect(extraField).toEqual([expect.stringContaining("must NOT have additional properties")]);
  const noVerdict = mismatches(await answerOf(Response.json({ error: "invalid_request", message: "x" }, { status: 400, headers: { "x-request-id": "r" } })), "GET", "/v1/voices");
  expect(noVerdict).toEqual([expect.stringContaining("x-should-retry is null")]);
});
