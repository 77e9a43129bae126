import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { ceilCredits, costOf, rateOf } from "../src/ledger/cost.ts";
import { createLogger } from "../src/log.ts";
import { AudioArrivals } from "../src/sessions/audio-arrivals.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak, wavFile } from "./helpers/speech.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// What an operator sees: one log line per HTTP request and per WebSocket session, and the
// Prometheus metrics, checked against the ledger's own records of the same requests.

type Line = Record<string, unknown>;
const lines: Line[] = [];
const rawLines: string[] = [];
let server: TestServer;
let account: { key: string; tenantId: string };

beforeAll(async () => {
  const sink = new Writable({
    write: (chunk, _enc, done) => {
      rawLines.push(String(chunk));
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  server = await startTestServer({}, { log: createLogger("info", sink) });
  account = await fundedAccount(server);
});
afterAll(() => server.stop(0));

const auth = () => ({ authorization: `Bearer ${account.key}`, "content-type": "application/json" });
const requestLine = (id: string) => lines.find((l) => l.msg === "request" && l.request_id === id);
async function lineOf(res: Response): Promise<Line> {
  const id = res.headers.get("x-request-id")!;
  for (let i = 0; i < 100 && !requestLine(id); i++) await Bun.sleep(20);
  return requestLine(id)!;
}
const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
const sample = (text: string, name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
async function activityOf(tenantId: string) {
  const { db, schema } = server.ctx.database;
  return db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
}

describe("log lines", () => {
  test("a streamed speech request: one line, after its body, with the key's owner, provider, model, status, latency and the credits the ledger billed", async () => {
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: auth(),
      body: JSON.stringify({ model: "flite", voice: "slt", input: "Logs tell the story.", response_format: "mp3" }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const line = await lineOf(res);
    const [record] = (await activityOf(account.tenantId)).filter((r) => r.surface === "oai");
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      route: "/oai/audio/speech",
      surface: "oai",
      status: 200,
      tenant: account.tenantId,
      provider: "flite",
      model: "cmu/flite",
      credits: record!.credits,
    });
    expect(account.key.startsWith(line.key_prefix as string)).toBe(true);
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(line.latency_ms as number);
    expect(new Date(line.time as string).toISOString()).toBe(line.time as string);
  });

  test("refusals are logged with their code: a missing key, an unknown path, a bad body", async () => {
    const missing = await fetch(`${server.url}/el/v1/text-to-speech/slt`, { method: "POST", body: "{}" });
    expect(await lineOf(missing)).toMatchObject({ status: 401, error: "missing_api_key", surface: "el", route: "/el/v1/text-to-speech/:voice_id" });
    const unknown = await fetch(`${server.url}/v1/none-such`, { headers: auth() });
    expect(await lineOf(unknown)).toMatchObject({ status: 404, error: "not_found", surface: "native" });
    const bad = await fetch(`${server.url}/oai/audio/speech`, { method: "POST", headers: auth(), body: "{" });
    expect(await lineOf(bad)).toMatchObject({ status: 400, tenant: account.tenantId, route: "/oai/audio/speech" });
  });

  test.skipIf(!localSttAvailable)("a file transcription: its line has the model and the billed credits", async () => {
    const form = new FormData();
    form.append("file", new Blob([wavFile(concat([silence(300), speak("one two three"), silence(300)]))], { type: "audio/wav" }), "speech.wav");
    form.append("model", "pocketsphinx-en-us");
    const res = await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${account.key}` }, body: form });
    expect(res.status).toBe(200);
    await res.text();
    const line = await lineOf(res);
    const record = (await activityOf(account.tenantId)).find((r) => r.capability === "stt")!;
    expect(line).toMatchObject({ status: 200, provider: "pocketsphinx", credits: record.credits, route: "/oai/audio/transcriptions" });
  });

  test("a WebSocket session: the upgrade's 101 line at once, and the session's line when it ends, both under the upgrade's request id", async () => {
    const c = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer(account.key));
    await c.opened;
    c.send({ type: "text", text: "Goodbye." });
    c.send({ type: "close" });
    await c.closed;
    let session: Line | undefined;
    for (let i = 0; i < 100 && !session; i++, await Bun.sleep(20)) session = lines.find((l) => l.msg === "session closed" && l.route === "/v1/tts" && l.tenant === account.tenantId);
    const upgrade = lines.find((l) => l.msg === "request" && l.request_id === session!.request_id)!;
    expect(upgrade).toMatchObject({ status: 101, route: "/v1/tts", tenant: account.tenantId });
    expect(session).toMatchObject({ outcome: "completed", surface: "native", transport: "ws", provider: "flite", code: 1000, key_prefix: upgrade.key_prefix });
    expect(session!.credits as number).toBeGreaterThan(0);
    expect(typeof session!.duration_ms).toBe("number");
  });

  test("no line holds a key or an Authorization header", () => {
    expect(rawLines.length).toBeGreaterThan(5);
    for (const raw of rawLines) {
      expect(raw).not.toContain(account.key);
      expect(raw).not.toContain(server.key);
      expect(raw.toLowerCase()).not.toContain("bearer ");
    }
  });
});

describe.skipIf(!localSttAvailable)("a streamed transcription (/oai/audio/transcriptions with stream: true)", () => {
  test("one open session while it runs (/healthz, sessions_open stt_file), its line and duration on transport http, and no event latency from a file's audio", async () => {
    const latencyCount = async () => sample(await metrics(), "voxroute_stt_event_latency_seconds_count", 'provider="pocketsphinx",kind="final"') || 0;
    const durations = async (transport: string) => sample(await metrics(), "voxroute_session_duration_seconds_count", `surface="oai",transport="${transport}",outcome="completed"`) || 0;
    const [latencyBefore, httpBefore, wsBefore] = [await latencyCount(), await durations("http"), await durations("ws")];
    // Long enough that the recognizer is still at it when the first segment has come.
    const speech = concat(Array.from({ length: 4 }, () => [speak("Thank you very much for your help."), silence(800)]).flat());
    const form = new FormData();
    form.append("file", new Blob([wavFile(speech)], { type: "audio/wav" }), "speech.wav");
    form.append("model", "pocketsphinx");
    form.append("stream", "true");
    const res = await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${account.key}` }, body: form });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let body = "";
    while (!body.includes("transcript.text.delta")) body += new TextDecoder().decode((await reader.read()).value);

    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok", sessions: 1 });
    const during = await metrics();
    expect(sample(during, "voxroute_sessions_open", 'channel="stt_file"')).toBe(1);
    expect(sample(during, "voxroute_sessions_open", 'channel="stt"') || 0).toBe(0);

    for (let read = await reader.read(); !read.done; read = await reader.read()) body += new TextDecoder().decode(read.value);
    expect(body).toContain("transcript.text.done");
    const id = res.headers.get("x-request-id");
    let line: Line | undefined;
    for (let i = 0; i < 100 && !line; i++, await Bun.sleep(20)) line = lines.find((l) => l.msg === "session closed" && l.request_id === id);
    expect(line).toMatchObject({ outcome: "completed", surface: "oai", transport: "http", provider: "pocketsphinx", route: "/oai/audio/transcriptions" });
    expect(lines.filter((l) => l.msg === "session closed" && l.request_id === id)).toHaveLength(1);
    expect(await durations("http")).toBe(httpBefore + 1);
    expect(await durations("ws")).toBe(wsBefore);
    expect(await latencyCount()).toBe(latencyBefore);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok", sessions: 0 });
    const after = await metrics();
    expect(sample(after, "voxroute_sessions_open", 'channel="stt_file"')).toBe(0);
    expect(sample(after, "voxroute_sessions_open", 'channel="stt"') || 0).toBe(0);
  }, 60_000);
});

describe.skipIf(!localSttAvailable)("a file transcription (no stream)", () => {
  const requests = async (labels: string) => sample(await metrics(), "voxroute_requests_total", labels) || 0;
  const transcribe = (key: string, body = wavFile(speak("Thank you very much."))) =>
    fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "audio/wav" }, body });

  test("counted in voxroute_requests_total by provider and outcome, one session closed line on transport http, as its activity record says", async () => {
    const served = 'surface="native",provider="pocketsphinx",status="completed"';
    const before = await requests(served);
    const payer = await fundedAccount(server);
    const res = await transcribe(payer.key);
    expect(res.status).toBe(200);
    const { billed_seconds } = (await res.json()) as { billed_seconds: number };
    const id = res.headers.get("x-request-id");
    let line: Line | undefined;
    for (let i = 0; i < 100 && !line; i++, await Bun.sleep(20)) line = lines.find((l) => l.msg === "session closed" && l.request_id === id);
    expect(line).toMatchObject({ outcome: "completed", surface: "native", transport: "http", provider: "pocketsphinx", billed: billed_seconds, route: "/v1/stt/transcriptions" });
    expect(lines.filter((l) => l.msg === "session closed" && l.request_id === id)).toHaveLength(1);
    expect(await requests(served)).toBe(before + 1);
    const [record] = await activityOf(payer.tenantId);
    expect(record).toMatchObject({ provider: "pocketsphinx", status: "completed", usageAmount: billed_seconds, credits: line!.credits });
  });

  test("a balance that cannot hold the file: 402, counted cut_off against no provider, recorded unbilled", async () => {
    const refused = 'surface="native",provider="none",status="cut_off"';
    const before = await requests(refused);
    // Enough for a second of audio (the request is admitted), not for the file.
    const pocketsphinx = server.ctx.catalogue.lookup("pocketsphinx", "stt")[0];
    const poor = await fundedAccount(server, ceilCredits(costOf(rateOf(pocketsphinx), 2)));
    const long = wavFile(concat(Array.from({ length: 10 }, () => [speak("Thank you very much for your help."), silence(800)]).flat()));
    const res = await transcribe(poor.key, long);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: string }).error).toBe("insufficient_balance");
    expect(await requests(refused)).toBe(before + 1);
    const records = await activityOf(poor.tenantId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: "failed", outcome: "cut_off", usageAmount: 0, credits: 0 });
  });
});

describe("metrics", () => {
  test("HTTP durations by route and status, refusals by code, sessions by surface and outcome, ledger writes, pools", async () => {
    const text = await metrics();
    expect(sample(text, "voxroute_http_request_duration_seconds_count", 'route="/oai/audio/speech",method="POST",status="200"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "voxroute_http_request_duration_seconds_count", 'route="unmatched",method="GET",status="404"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "voxroute_refusals_total", 'surface="el",code="missing_api_key"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "voxroute_session_duration_seconds_count", 'surface="native",transport="ws",outcome="completed"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "voxroute_session_duration_seconds_count", 'surface="oai",transport="http",outcome="completed"')).toBeGreaterThanOrEqual(1);
    expect(Number(/^voxroute_ledger_write_seconds_count (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    for (const pool of ["tts_engines", "stt_audio", "files"]) {
      expect(sample(text, "voxroute_pool_lanes", `pool="${pool}"`)).toBeGreaterThanOrEqual(0);
      expect(sample(text, "voxroute_pool_waiting", `pool="${pool}"`)).toBe(0);
    }
  });

  test("refusals are HTTP answers 4xx with a code, a refused upgrade among them, never a session closed after its upgrade; the help says so", async () => {
    const before = await metrics();
    const refused = await upgradeRequest(`${server.url}/v1/tts?model=flite&voice=nobody`, bearer(account.key));
    expect(refused.status).toBe(400);
    const session = connect(server.wsUrl("/v1/tts?model=flite&voice=slt"), bearer("vxr_notAKeyOfAnyone"));
    expect((await session.closed).close.code).toBe(4401);
    const after = await metrics();
    const count = (text: string, code: string) => sample(text, "voxroute_refusals_total", `surface="native",code="${code}"`) || 0;
    expect(count(after, "invalid_request") - count(before, "invalid_request")).toBe(1);
    expect(count(after, "invalid_api_key")).toBe(count(before, "invalid_api_key"));
    expect(/^# HELP voxroute_refusals_total (.*)$/m.exec(after)?.[1]).toBe(
      "HTTP requests answered 4xx with an error code (401, 402, 400, 429, …; WebSocket upgrades refused before the upgrade too), by surface and code; sessions closed after their upgrade are not counted",
    );
  });

  test("credits, characters and audio seconds billed equal what the ledger recorded", async () => {
    const fresh = await fundedAccount(server);
    const before = await metrics();
    const text = "Counted once and only once.";
    const speech = await fetch(`${server.url}/el/v1/text-to-speech/slt?output_format=pcm_16000`, {
      method: "POST",
      headers: { "xi-api-key": fresh.key, "content-type": "application/json" },
      body: JSON.stringify({ text, model_id: "flite" }),
    });
    expect(speech.status).toBe(200);
    await speech.arrayBuffer();
    await lineOf(speech);
    const after = await metrics();
    const [record] = await activityOf(fresh.tenantId);
    const delta = (name: string, labels: string) => sample(after, name, labels) - (sample(before, name, labels) || 0);
    expect(delta("voxroute_credits_billed_total", 'provider="flite",model="cmu/flite",capability="tts"')).toBe(record!.credits);
    expect(delta("voxroute_characters_total", 'provider="flite",model="cmu/flite"')).toBe(text.length);
  });

  test.skipIf(!localSttAvailable)("STT event latency is observed per provider and kind, from the arrival of the audio a transcript ends with", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000"), bearer(account.key));
    await c.opened;
    for (const f of frames(concat([speak("hello world"), silence(1200)]))) c.ws.send(f);
    c.send({ type: "stt.session.close" });
    await c.closed;
    const text = await metrics();
    expect(sample(text, "voxroute_stt_event_latency_seconds_count", 'provider="pocketsphinx",kind="final"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "voxroute_audio_seconds_total", 'provider="pocketsphinx",model="cmu/pocketsphinx-en-us"')).toBeGreaterThan(0);
  });
});

test("every metric the Grafana dashboard in docs/ charts is one /metrics exposes", async () => {
  const dashboard = await Bun.file(new URL("../docs/grafana-dashboard.json", import.meta.url)).text();
  const charted = new Set([...dashboard.matchAll(/voxroute_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, "")));
  const exposed = await metrics();
  expect(charted.size).toBeGreaterThan(10);
  for (const name of charted) expect(exposed).toContain(`# TYPE ${name} `);
});

describe("audio arrivals", () => {
  test("a time is found in the frame that held it; forgotten and future times are not", () => {
    const a = new AudioArrivals(32_000); // 16 kHz PCM: 640 bytes are 20 ms
    for (let i = 0; i < 600; i++) a.arrived(640, 1000 + i);
    expect(a.arrivalOf(600 * 20)).toBe(1599);
    expect(a.arrivalOf(600 * 20 - 25)).toBe(1598);
    expect(a.arrivalOf(90 * 20 + 1)).toBe(1090);
    expect(a.arrivalOf(10)).toBeUndefined(); // its frame is no longer remembered
    expect(a.arrivalOf(600 * 20 + 1)).toBeUndefined();
  });
});
