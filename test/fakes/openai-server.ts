// The OpenAI fake as its own process (for benchmarks): prints its URL, serves until killed.
import { startFakeOpenAi } from "./openai.ts";

const fake = startFakeOpenAi();
console.log(JSON.stringify({ url: fake.url }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
