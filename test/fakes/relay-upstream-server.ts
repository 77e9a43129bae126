// The relay upstream as its own process (for benchmarks): prints its URL, keeps no frames, answers
// every 640 bytes (a 20 ms frame) of audio, serves until killed.
import { startRelayUpstream } from "./relay-upstream.ts";

const upstream = startRelayUpstream({ record: false, answerEvery: 640 });
console.log(JSON.stringify({ url: upstream.url }));
process.on("SIGTERM", () => {
  upstream.stop();
  process.exit(0);
});
