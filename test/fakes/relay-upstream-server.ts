// The relay upstream as its own process (for benchmarks): prints its URL, keeps no frames, serves until killed.
import { startRelayUpstream } from "./relay-upstream.ts";

const upstream = startRelayUpstream({ record: false });
console.log(JSON.stringify({ url: upstream.url }));
process.on("SIGTERM", () => {
  upstream.stop();
  process.exit(0);
});
