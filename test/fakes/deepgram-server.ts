// The Deepgram fake as its own process (for benchmarks): prints its URLs and that of its fault
// control (fault-control-server.ts), serves until killed.
import { startFakeDeepgram } from "./deepgram.ts";
import { serveFaultControl } from "./fault-control-server.ts";

const fake = startFakeDeepgram();
console.log(JSON.stringify({ url: fake.http, ws: fake.ws, control: serveFaultControl(fake.faults, fake.midStream) }));
process.on("SIGTERM", () => {
  fake.stop();
  process.exit(0);
});
