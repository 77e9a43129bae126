// The OTLP/HTTP receiver fake as its own process (for benchmarks): prints its URL, serves until killed.
import { startFakeOtlpReceiver } from "./otlp-receiver.ts";

const receiver = startFakeOtlpReceiver({ keep: false });
console.log(JSON.stringify({ url: receiver.url }));
process.on("SIGTERM", () => {
  console.error(`OTLP receiver: ${receiver.received()} spans received`);
  receiver.stop();
  process.exit(0);
});
