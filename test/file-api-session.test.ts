import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { ensureTenant } from "../src/accounts/keys.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import type { Binding, ProviderSpec } from "../src/catalogue/types.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { ApiError, ProviderError } from "../src/errors.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { Meter } from "../src/ledger/meter.ts";
import { createLogger } from "../src/log.ts";
import { Metrics } from "../src/metrics.ts";
import type { SttProvider, TranscriptionRequest } from "../src/providers/stt-types.ts";
import { ProviderHealth } from "../src/routing/health.ts";
import { type FileApiResult, FileApiSession } from "../src/sessions/file-api-session.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// A file's fallback to a dearer file API goes through the session's one credit gate, on a real
// ledger: the whole file is held for on each candidate's own binding before it is given the file,
// and the request is settled once, whatever the gate answered.

const SECONDS = 10;

const provider = (id: string, perMinute: string): ProviderSpec => ({
  id,
  name: id,
  kind: "cloud",
  requiresVoice: false,
  defaults: {},
  bindings: [{ capability: "stt", id: "files", canonical: `${id}/files`, streaming: false, synchronous: true, formats: [], price: { amount: perMinute, per: "minute" } }],
});
// 100 credits a second, and ten times that: the file costs 1000 on the cheap provider, 10 000 on the dear one.
const catalogue = new Catalogue({
  providers: [provider("cheap", "0.006"), provider("dear", "0.06")],
  models: ["cheap", "dear"].map((id) => ({ canonical: `${id}/files`, name: id, capability: "stt" as const, aliases: [] })),
});
const binding = (id: string): Binding => catalogue.bindings.find((b) => b.provider.id === id)!;

/** The cheap provider is down (a retryable failure, so the dear one is tried next); the dear one transcribes. */
function providers(given: string[]): (id: string) => SttProvider {
  const transcribe = (id: string) => async (req: TranscriptionRequest) => {
    given.push(id);
    if (id === "cheap") throw new ProviderError("cheap is down", true);
    return { text: `heard by ${id} (${req.seconds} s)`, segments: [] };
  };
  return (id) => ({ id, family: () => undefined, transcribe: transcribe(id) }) as SttProvider;
}

let database: Database;
let ledger: Ledger;
beforeAll(async () => {
  database = await openDatabase(`sqlite://${join(tempDir("file-api-"), "db.sqlite")}`);
  ledger = new Ledger(database, 60_000);
});
afterAll(() => database.close());

async function tenant(credits: number): Promise<string> {
  const { tenantId } = await ensureTenant(database, `t-${crypto.randomUUID()}`);
  await ledger.credit(tenantId, { credits, type: "adjustment", description: "test" });
  return tenantId;
}

/** Transcribes the file for `tenantId` on [cheap, dear] with `meter`'s ledger; the result or the error the client hears. */
async function transcribe(tenantId: string, meter = new Meter(ledger, createLogger("silent"))) {
  const given: string[] = [];
  const metrics = new Metrics(false);
  const id = `stt_file_${crypto.randomUUID()}`;
  const session = new FileApiSession(
    {
      id,
      admit: async () => ({ candidates: [binding("cheap"), binding("dear")], meter: meter.start(id, { tenantId }, "test") }),
      bytes: new Uint8Array(16),
      container: "wav",
      mimeType: "audio/wav",
      seconds: SECONDS,
    },
    {
      provider: providers(given),
      port: { close: () => {} },
      log: createLogger("silent"),
      metrics,
      connectTimeoutMs: 1000,
      health: new ProviderHealth({ failureThreshold: 3, cooldownMs: 1000, cooldownMaxMs: 1000 }, createLogger("silent")),
      surface: "test",
      transport: "http",
    },
  );
  const outcome: { result?: FileApiResult; error?: unknown } = await session.result.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  await session.finished;
  const records = await database.db.select().from(database.schema.activity).where(eq(database.schema.activity.tenantId, tenantId));
  const upstreamErrors = (await metrics.registry.getSingleMetric("voxroute_upstream_errors_total")!.get()).values.map((v) => v.labels.provider);
  return { ...outcome, given, records, upstreamErrors, balance: (await ledger.snapshot(tenantId)).balance };
}

describe("a file's fallback to a dearer provider, through the credit gate", () => {
  test("a balance that pays for the cheap provider but not the dear one: 402 insufficient_balance, the dear one never given the file, one record, nothing billed", async () => {
    const t = await tenant(5_000);
    const { error, given, records, balance } = await transcribe(t);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "insufficient_balance", message: `the balance cannot pay for ${SECONDS} s of audio on dear` });
    expect(given).toEqual(["cheap"]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "dear", status: "failed", outcome: "cut_off", usageAmount: 0, credits: 0 });
    expect(JSON.parse(records[0].attempts)).toEqual([{ provider: "cheap", reason: "cheap is down" }]);
    expect(balance).toMatchObject({ paidCredits: 5_000, paidHeld: 0 });
  });

  test("a rich balance: the dear provider transcribes, billed its price for the file once", async () => {
    const t = await tenant(1_000_000);
    const { result, given, records, balance } = await transcribe(t);
    expect(result).toMatchObject({ text: `heard by dear (${SECONDS} s)`, provider: "dear", model: "dear/files" });
    expect(given).toEqual(["cheap", "dear"]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "dear", status: "completed", outcome: "completed", usageAmount: SECONDS, credits: 10_000 });
    expect(balance).toMatchObject({ paidCredits: 1_000_000 - 10_000, paidHeld: 0 });
  });

  test("a ledger that cannot hold for the fallback fails the request as the gate does: no attempt or upstream error blamed on the dear provider", async () => {
    const t = await tenant(1_000_000);
    const failing = Object.create(ledger) as Ledger;
    let reserves = 0;
    failing.reserve = (...args) => (++reserves === 2 ? Promise.reject(new Error("the database went away")) : ledger.reserve(...args));
    const { error, given, records, upstreamErrors, balance } = await transcribe(t, new Meter(failing, createLogger("silent")));
    expect(error).toMatchObject({ message: "the database went away" });
    expect(reserves).toBe(2);
    expect(given).toEqual(["cheap"]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: "dear", status: "failed", outcome: "failed", credits: 0 });
    expect(JSON.parse(records[0].attempts)).toEqual([{ provider: "cheap", reason: "cheap is down" }]);
    expect(upstreamErrors).toEqual(["cheap"]);
    expect(balance).toMatchObject({ paidCredits: 1_000_000, paidHeld: 0 });
  });
});
