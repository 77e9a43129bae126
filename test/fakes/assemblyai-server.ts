// The AssemblyAI fake as its own process (for benchmarks): prints its URL, serves until killed.
import { startFakeAssemblyAi } from "./assemblyai.ts";

const fake = startFakeAssemblyAi();
console.log(JSON.stringify({ url: fake.url }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
