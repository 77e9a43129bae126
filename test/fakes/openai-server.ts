// The OpenAI fake as its own process (for benchmarks): prints its URL (the HTTP API and the realtime
// WebSocket at /v1/realtime share it), serves until killed.
import { startFakeOpenAi } from "./openai.ts";

const fake = startFakeOpenAi();
console.log(JSON.stringify({ url: fake.url }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
