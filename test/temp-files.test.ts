import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createKey } from "./helpers/accounts.ts";
import { openDatabase } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { localSttAvailable, transcribeRecording } from "./helpers/local-stt.ts";
import { type ServerProcess, spawnServer } from "./helpers/process.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { bearer } from "./helpers/ws-client.ts";

// What a server process leaves behind once it stopped: nothing in its temporary directory (Flite
// writes each utterance to a file there), and none of the telemetry onnxruntime (the router VAD)
// would start, whose logs go to the temporary directory and whose device id to the cache
// directory. The process gets both directories of its own, so no other process's files count.

const home = tempDir("voxroute-leftovers-");
const tmp = join(home, "tmp");
const cache = join(home, "cache");
mkdirSync(tmp);
mkdirSync(cache);
let server: ServerProcess | undefined;
afterAll(() => server?.proc.kill("SIGKILL"));

describe.skipIf(!localSttAvailable)("a server process's temporary files", () => {
  test("after Flite speech and a session with the router VAD, SIGTERM leaves nothing in its TMPDIR and no telemetry in its cache", async () => {
    const databaseUrl = `sqlite://${join(home, "db.sqlite")}`;
    server = await spawnServer({ DATABASE_URL: databaseUrl, TMPDIR: tmp, XDG_CACHE_HOME: cache, TTS_WORKERS: "2", AUDIO_WORKERS: "1" });
    const database = await openDatabase(databaseUrl);
    const { key, tenantId } = await createKey(database, "leftovers");
    await new Ledger(database).credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    await database.close();

    const speech = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input: "Flite writes this to a file first.", response_format: "pcm" }),
    });
    expect(speech.status).toBe(200);
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(16000);

    const { events, close } = await transcribeRecording(server.url, key);
    expect(close.code).toBe(1000);
    expect(events.find((e) => e.type === "stt.signal" && e.signal === "started")).toMatchObject({ origin: "router", basis: ["vad"] });

    expect(readdirSync(tmp)).not.toEqual([]); // Flite's files, while it runs
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(cache)).not.toContain("Microsoft");
  }, 60_000);
});
