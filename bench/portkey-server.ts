// The Portkey open-source gateway (npm @portkey-ai/gateway, a Hono app) as its own process, for
// bench:peer: its published entry, build/start-server.js, serves on `--port=N` with Hono's Node
// adapter, which Bun runs (under Node 20 its audio answers fail). Its console output goes to
// stderr; stdout carries only the first line every bench party prints: its URL as JSON.
import { writeSync } from "node:fs";

const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
const port = probe.port;
probe.stop(true);

process.argv = [...process.argv.slice(0, 2), `--port=${port}`, "--headless"];
console.log = console.error;
console.info = console.error;
console.clear = () => {};
process.stdout.write = ((chunk: string | Uint8Array) => process.stderr.write(chunk)) as typeof process.stdout.write;
const entry = "@portkey-ai/gateway/build/start-server.js"; // untyped: imported for its side effect, the server
await import(entry);

const url = `http://127.0.0.1:${port}`;
// The server listens once Hono's adapter has bound the port: wait for it to answer.
for (;;) {
  const up = await fetch(`${url}/`).then(
    () => true,
    () => false,
  );
  if (up) break;
  await Bun.sleep(20);
}
writeSync(1, `${JSON.stringify({ url })}\n`);
process.on("SIGTERM", () => process.exit(0));
