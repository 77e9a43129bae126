// The router as the benchmark measures it: a real server process with the embedded engines and
// the trivial fixed-PCM provider (no engine cost), and optionally a relay STT upstream. Prints its URL and a fresh, funded key, then serves.
import { createKey } from "../test/helpers/accounts.ts";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { FixedPcmProvider, testCatalogue } from "../test/fakes/fixed-pcm-provider.ts";
import { RelayProvider, relayCatalogue } from "../test/fakes/relay-upstream.ts";
import { ManyVoicesProvider, manyVoicesCatalogue } from "../test/fakes/many-voices.ts";

// RELAY_UPSTREAM_URL: also serve the STT model `relay-1` over that relay upstream (bench:stt).
// BENCH_VOICES: also serve a provider with that many voices (bench:voices).
// BENCH_LIMITED_TENANT: JSON limits of a second tenant (bench:tenants), whose key is printed as `limitedKey`.
const relay = process.env.RELAY_UPSTREAM_URL;
const voices = Number(process.env.BENCH_VOICES ?? 0);
const parts = [testCatalogue(["fixed"]), ...(relay ? [relayCatalogue()] : []), ...(voices ? [manyVoicesCatalogue()] : [])];
const catalogue = { providers: parts.flatMap((c) => c.providers), models: parts.flatMap((c) => c.models) };
// The TTS cache is off unless a bench asks for it: its rounds repeat one text, which would measure hits, not the path to the provider.
const server = await startServer(loadConfig({ TTS_CACHE_BYTES: "0", ...process.env }), {
  extra: { catalogue, providers: [new FixedPcmProvider("fixed", 10), ...(voices ? [new ManyVoicesProvider(voices)] : [])], sttProviders: relay ? [new RelayProvider(relay)] : [] },
});
const { key, tenantId } = await createKey(server.ctx.database, "bench");
await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });
const limitedKey = process.env.BENCH_LIMITED_TENANT ? await limitedTenant(process.env.BENCH_LIMITED_TENANT) : undefined;
console.log(JSON.stringify({ url: server.url, key, ...(limitedKey ? { limitedKey } : {}) }));

async function limitedTenant(limits: string): Promise<string> {
  const limited = await createKey(server.ctx.database, "limited");
  await server.ctx.meter.ledger.credit(limited.tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });
  await server.ctx.database.sql.transaction((tx) => tx.query("UPDATE tenants SET limits = ? WHERE id = ?", [limits, limited.tenantId]));
  return limited.key;
}
process.on("SIGTERM", async () => {
  await server.stop(0);
  process.exit(0);
});
