// The router as the benchmark measures it: a real server process with the embedded engines and
// the trivial fixed-PCM provider (no engine cost), and optionally a relay STT upstream. Prints its URL and a fresh, funded key, then serves.
import { createKey } from "../src/accounts/keys.ts";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { FixedPcmProvider, testCatalogue } from "../test/fakes/fixed-pcm-provider.ts";
import { RelayProvider, relayCatalogue } from "../test/fakes/relay-upstream.ts";

// RELAY_UPSTREAM_URL: also serve the STT model `relay-1` over that relay upstream (bench:stt).
const relay = process.env.RELAY_UPSTREAM_URL;
const fixed = testCatalogue(["fixed"]);
const catalogue = relay ? { providers: [...fixed.providers, ...relayCatalogue().providers], models: [...fixed.models, ...relayCatalogue().models] } : fixed;
const server = await startServer(loadConfig(process.env), {
  extra: { catalogue, providers: [new FixedPcmProvider("fixed", 10)], sttProviders: relay ? [new RelayProvider(relay)] : [] },
});
const { key, tenantId } = await createKey(server.ctx.database, "bench");
await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });
console.log(JSON.stringify({ url: server.url, key }));
process.on("SIGTERM", async () => {
  await server.stop(0);
  process.exit(0);
});
