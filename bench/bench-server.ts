// The router as the benchmark measures it: a real server process with the embedded engines and
// the trivial fixed-PCM provider (no engine cost). Prints its URL and a fresh, funded key, then serves.
import { createKey } from "../src/accounts/keys.ts";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { FixedPcmProvider, testCatalogue } from "../test/fakes/fixed-pcm-provider.ts";

const server = await startServer(loadConfig(process.env), {
  extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 10)] },
});
const { key, tenantId } = await createKey(server.ctx.database, "bench");
await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });
console.log(JSON.stringify({ url: server.url, key }));
process.on("SIGTERM", async () => {
  await server.stop(0);
  process.exit(0);
});
