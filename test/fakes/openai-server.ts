// The OpenAI fake as its own process (for benchmarks): prints its URL (the HTTP API and the realtime
// WebSocket at /v1/realtime share it) and the URL of its fault control (fault-control-server.ts),
// serves until killed.
import { serveFaultControl } from "./fault-control-server.ts";
import { startFakeOpenAi } from "./openai.ts";

const fake = startFakeOpenAi();
console.log(JSON.stringify({ url: fake.url, control: serveFaultControl(fake.faults) }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
