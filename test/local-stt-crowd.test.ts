import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createKey } from "./helpers/accounts.ts";
import { pcmOfWav } from "../src/audio/wav.ts";
import { openDatabase } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { spawnServer, type ServerProcess } from "./helpers/process.ts";
import { frames, silence } from "./helpers/speech.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// A crowd on the local recognizer: 200 /v1/stt sessions opened at once against a server in its
// own process with its default settings. Its memory is sampled from /proc: it must stay under
// 1.5 GiB (the server is killed at once if it crosses, so a regression cannot take the machine
// down). Every session must be served or refused as documented (503 before the upgrade, or
// stt.error then 1013 after it, never having started), none left hanging; a served one must
// transcribe the real speech it sends. How soon each is decided is a benchmark's question.

const SESSIONS = 200;
const RSS_LIMIT_KIB = 1.5 * 1024 * 1024;
const FIXTURE_TEXT = "thank you very much for your help";
const speech = new Int16Array(pcmOfWav(new Uint8Array(readFileSync(new URL("./fixtures/speech.wav", import.meta.url)))).slice().buffer);

let server: ServerProcess | undefined;
afterAll(() => server?.proc.kill("SIGKILL"));

function memoryKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: field("VmRSS"), peak: field("VmHWM") };
}

type Outcome = { kind: "served"; text: string; close: number } | { kind: "refused"; how: string } | { kind: "other"; how: string };

/** One session: opened at once with the others; once started, the speech all at once, then close. */
function session(url: string, key: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${key}` } } as any);
    let started = false;
    let refusedBeforeUpgrade = false;
    const events: string[] = [];
    const finals: string[] = [];
    ws.onerror = (e) => {
      // A refusal before the upgrade shows as a failed handshake naming the status.
      if (!started && /\b503\b/.test((e as ErrorEvent).message)) refusedBeforeUpgrade = true;
    };
    ws.onmessage = (e) => {
      const ev = JSON.parse(String(e.data));
      events.push(ev.type === "stt.error" ? `stt.error ${ev.code}` : ev.type);
      if (ev.type === "stt.session.started") {
        started = true;
        for (const f of frames(speech)) ws.send(f);
        for (const f of frames(silence(700))) ws.send(f);
        ws.send(JSON.stringify({ type: "stt.session.close" }));
      } else if (ev.type === "stt.transcript.final") finals.push(ev.text);
    };
    ws.onclose = (e) => {
      if (refusedBeforeUpgrade) resolve(events.length ? { kind: "other", how: `503 after ${events.join(", ")}` } : { kind: "refused", how: "503" });
      // Refused after the upgrade: the error event, then the close; never started.
      else if (e.code === 1013 && e.reason === "provider_overloaded")
        resolve(events.join(",") === "stt.error provider_overloaded" ? { kind: "refused", how: "1013" } : { kind: "other", how: `1013 after ${events.join(", ")}` });
      else if (started && (finals.length || e.code === 1000)) resolve({ kind: "served", text: finals.join(" "), close: e.code });
      else resolve({ kind: "other", how: `${e.code} ${e.reason} after ${events.join(", ")}` });
    };
  });
}

describe.skipIf(!localSttAvailable)("200 local STT sessions opened at once", () => {
  test("the server stays under 1.5 GiB; each session is served or refused as documented, none left hanging; served ones get the real transcript", async () => {
    const dir = tempDir("voxroute-crowd-");
    const databaseUrl = `sqlite://${join(dir, "db.sqlite")}`;
    server = await spawnServer({ DATABASE_URL: databaseUrl });
    const database = await openDatabase(databaseUrl);
    const { key, tenantId } = await createKey(database, "crowd");
    await new Ledger(database).credit(tenantId, { credits: 100_000_000, type: "adjustment", description: "test" });
    await database.close();

    const pid = server.proc.pid;
    let peakSeen = 0;
    let killedAt: number | undefined;
    const sampler = setInterval(() => {
      const { rss } = memoryKiB(pid);
      peakSeen = Math.max(peakSeen, rss);
      if (rss > RSS_LIMIT_KIB && killedAt === undefined) {
        killedAt = rss;
        server!.proc.kill("SIGKILL");
      }
    }, 25);

    const url = `${server.wsUrl("/v1/stt")}?model=pocketsphinx-en-us&audio_format=pcm_16000&commit_strategy=manual&interim_results=false`;
    const outcomes = await Promise.all(Array.from({ length: SESSIONS }, () => session(url, key)));
    clearInterval(sampler);
    const { peak } = killedAt === undefined ? memoryKiB(pid) : { peak: killedAt };

    const served = outcomes.filter((o) => o.kind === "served");
    const refused = outcomes.filter((o) => o.kind === "refused");
    console.log(
      `crowd: ${served.length} served, ${refused.length} refused (${refused.filter((o) => o.how === "503").length} before the upgrade), ` +
        `${outcomes.length - served.length - refused.length} other; peak RSS ${Math.round(Math.max(peak, peakSeen) / 1024)} MiB`,
    );
    expect(killedAt).toBeUndefined();
    expect(peak).toBeLessThan(RSS_LIMIT_KIB);
    expect(outcomes.filter((o) => o.kind === "other")).toEqual([]);
    expect(served.length + refused.length).toBe(SESSIONS);
    expect(served.length).toBeGreaterThanOrEqual(6); // at least every decoder once (3 per worker, 2 workers)
    for (const s of served) expect(s).toMatchObject({ text: FIXTURE_TEXT, close: 1000 });
  }, 120_000);
});
