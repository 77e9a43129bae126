// A voxroute server process for tests that need real processes (two instances, kill -9): the
// production server with the in-process test providers added. Prints `{"url": …}` once listening.
import { loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { FixedPcmProvider, testCatalogue } from "./fixed-pcm-provider.ts";

const server = await startServer(loadConfig(process.env), {
  extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", Number(process.env.FIXED_CHUNKS ?? 2))] },
});
console.log(JSON.stringify({ url: server.url }));
process.on("SIGTERM", async () => {
  await server.stop(0);
  process.exit(0);
});
