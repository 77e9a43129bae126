// The OpenAI fake as its own process (for benchmarks): prints its URL (the HTTP API and the realtime
// WebSocket at /v1/realtime share it) and the URL of its fault control (fault-control-server.ts),
// serves until killed. With FAKE_SPEECH_SPEED, its PCM speech streams at that many times real time.
import { serveFaultControl } from "./fault-control-server.ts";
import { speechSpeedFromEnv } from "./http-fake.ts";
import { startFakeOpenAi } from "./openai.ts";

const fake = startFakeOpenAi({ speechSpeed: speechSpeedFromEnv() });
console.log(JSON.stringify({ url: fake.url, control: serveFaultControl(fake.faults) }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
