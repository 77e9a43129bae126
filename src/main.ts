import { loadConfig } from "./config.ts";
import { startServer } from "./server.ts";

const server = await startServer(loadConfig());

// A last line of defence: a promise rejected where nobody was listening is logged; it must not
// take every open session down with the process.
process.on("unhandledRejection", (err) => server.ctx.log.error({ err }, "unhandled rejection"));

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(0);
  });
}
