// The ConversationRelay fake as its own process (for benchmarks): prints its URL, serves until killed.
import { startFakeApp } from "./conversation-relay-app.ts";

const app = startFakeApp({ record: false });
console.log(JSON.stringify({ url: app.url("") }));
process.on("SIGTERM", () => {
  app.stop();
  process.exit(0);
});
