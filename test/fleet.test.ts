import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { spawnServer, type ServerProcess } from "./helpers/process.ts";
import { PICO_DIR } from "./helpers/server.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// A fleet: two server processes on one PostgreSQL, as behind a load balancer that sends each
// request wherever it likes (docs/deployment.md). One account signs up, pays, speaks and listens
// through the native and compatibility surfaces on both; every piece of state the instances share
// (codes, keys, balances, holds, activity, single-use secrets, payments) must agree.

const servers: ServerProcess[] = [];
let drop: (() => Promise<void>) | undefined;
const outbox = tempDir("fleet-outbox-");

beforeAll(async () => {
  if (!postgresAvailable) return;
  const fresh = await freshPostgres();
  drop = fresh.drop;
  const env = { DATABASE_URL: fresh.url, TTS_WORKERS: "1", DEV_OUTBOX_DIR: outbox, SANDBOX_PAYMENTS: "true", WELCOME_GRANT_USD: "0", PICO_VOICES_DIR: PICO_DIR };
  // Started together, as a fleet is: one applies the migrations while the other waits for it.
  servers.push(...(await Promise.all([spawnServer(env), spawnServer(env)])));
});
afterAll(async () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  await drop?.();
});

const [A, B] = [0, 1];
const on = (i: number) => servers[i]!;
const post = (i: number, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${on(i).url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const getJson = async (i: number, path: string, key: string) => (await (await fetch(`${on(i).url}${path}`, { headers: bearer(key) })).json()) as any;

async function codeMailedTo(email: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mail = readdirSync(outbox).find((f) => f.endsWith(`-${email}.eml`));
    if (mail) return /\b(\d{6})\b/.exec(readFileSync(join(outbox, mail), "utf8"))![1]!;
    await Bun.sleep(20);
  }
  throw new Error(`no code for ${email}`);
}

describe.skipIf(!postgresAvailable)("two instances on one PostgreSQL", () => {
  let key: string;

  test("a code asked of one instance is verified on the other; the key works on both", async () => {
    const email = `fleet-${crypto.randomUUID().slice(0, 8)}@example.com`;
    expect((await post(A, "/account/agent-signup", { email })).status).toBe(200);
    const verified = await post(B, "/account/agent-signup/verify", { email, code: await codeMailedTo(email) });
    expect(verified.status).toBe(200);
    key = ((await verified.json()) as { api_key: string }).api_key;
    for (const i of [A, B]) expect((await fetch(`${on(i).url}/account/balance`, { headers: bearer(key) })).status).toBe(200);
    // The signup limits are the fleet's, not each instance's: 3 codes per address in all.
    for (const i of [A, B]) expect((await post(i, "/account/agent-signup", { email })).status).toBe(200);
    expect((await post(A, "/account/agent-signup", { email })).status).toBe(429);
  });

  test("a top-up link made on one instance is paid on the other, once", async () => {
    const link = (await (await post(A, "/account/top-up-link", { amount_usd: 5 }, { ...bearer(key), "idempotency-key": "fleet-1" })).json()) as { url: string };
    const onB = link.url.replace(on(A).url, on(B).url);
    for (const base of [onB, link.url]) expect((await fetch(`${base}/complete`, { method: "POST" })).status).toBe(200);
    for (const i of [A, B]) expect((await getJson(i, "/account/balance", key)).paid_credits).toBe(5_000_000);
  });

  test("speech and transcription through every surface, alternating instances: one activity record each, the same books on both", async () => {
    const openai = (i: number) => new OpenAI({ apiKey: key, baseURL: `${on(i).url}/oai`, maxRetries: 0 });
    const elevenlabs = (i: number) => new ElevenLabsClient({ apiKey: key, baseUrl: `${on(i).url}/el`, maxRetries: 0 });

    const mp3 = await (await openai(A).audio.speech.create({ model: "flite", voice: "slt", input: "Served by the first instance." })).arrayBuffer();
    expect(mp3.byteLength).toBeGreaterThan(1000);
    const pcm = await new Response(await elevenlabs(B).textToSpeech.convert("slt", { text: "Served by the second instance.", modelId: "flite", outputFormat: "pcm_16000" })).arrayBuffer();
    expect(pcm.byteLength).toBeGreaterThan(16_000);

    const native = connect(on(A).wsUrl("/v1/tts?model=pico&voice=en-US"), bearer(key));
    native.send({ type: "text", text: "And natively." });
    native.send({ type: "close" });
    expect((await native.closed).close.code).toBe(1000);

    let expected = 3;
    if (localSttAvailable) {
      const file = new File([wavFile(concat([silence(300), speak("one two three"), silence(300)]))], "speech.wav", { type: "audio/wav" });
      const heard = await openai(B).audio.transcriptions.create({ model: "pocketsphinx", file });
      expect(heard.text).toBe("one two three");
      expected++;
    }

    let activity: { items: { credits: number; provider: string; capability: string; status: string }[] } = { items: [] };
    for (let i = 0; i < 100 && activity.items.length < expected; i++, await Bun.sleep(50)) activity = await getJson(B, "/account/activity", key);
    expect(activity.items).toHaveLength(expected);
    expect(activity.items.map((r) => `${r.capability} ${r.provider}`).sort()).toEqual(["tts flite", "tts flite", "tts svox-pico", ...(localSttAvailable ? ["stt pocketsphinx"] : [])].sort());
    expect(activity.items.every((r) => r.status === "completed")).toBe(true);
    const spent = activity.items.reduce((n, r) => n + r.credits, 0);
    const [onA, onB] = [await getJson(A, "/account/balance", key), await getJson(B, "/account/balance", key)];
    expect(onA).toEqual(onB);
    // Paid credits less what was billed, within the sub-credit carry.
    expect(5_000_000 - spent - onA.paid_credits).toBeWithin(0, 1);
    expect(await getJson(A, "/account/activity", key)).toEqual(activity);
  });

  test.skipIf(!localSttAvailable)("an ephemeral key minted on one instance opens one session on the other, and only one in the fleet", async () => {
    const session = { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "pocketsphinx" } } } } as const;
    const secret = await new OpenAI({ apiKey: key, baseURL: `${on(A).url}/oai` }).realtime.clientSecrets.create({ session });
    const open = (i: number) => new WebSocket(on(i).wsUrl("/oai/realtime?intent=transcription"), ["realtime", `openai-insecure-api-key.${secret.value}`]);
    const first = open(B);
    const created = await new Promise<any>((resolve) => (first.onmessage = (e) => resolve(JSON.parse(String(e.data)))));
    expect(created.type).toBe("session.created");
    const again = open(A);
    const refused = await new Promise<CloseEvent>((resolve) => (again.onclose = resolve));
    expect([refused.code, refused.reason]).toEqual([4401, JSON.stringify({ error: "invalid_client_secret" })]);
    first.close();
  });
});
