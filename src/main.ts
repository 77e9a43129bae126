import { keepTouchedMemory } from "./touched-memory.ts";

keepTouchedMemory();
// Loaded after the exec above, so the process loads its modules once.
const { loadConfig } = await import("./config.ts");
const { PortTakenError, startServer } = await import("./server.ts");

// A server that cannot start says why on stderr and exits non-zero; a bad setting or a taken port
// is the operator's to fix, not a crash to read a stack trace from.
const server = await Promise.resolve()
  .then(() => startServer(loadConfig(process.env)))
  .catch((err: Error) => {
    const known = err instanceof PortTakenError || err.message.startsWith("config:");
    console.error(`voxroute did not start: ${known ? err.message : (err.stack ?? err.message)}`);
    process.exit(1);
  });

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

// SIGHUP: new TLS certificate files are served to new connections (docs/operations.md#tls).
process.on("SIGHUP", () => server.reloadTls());
