// The Deepgram fake as its own process (for benchmarks): prints its URLs, serves until killed.
import { startFakeDeepgram } from "./deepgram.ts";

const fake = startFakeDeepgram();
console.log(JSON.stringify({ url: fake.http, ws: fake.ws }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
