import { expect, test } from "bun:test";
import { Glob } from "bun";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer } from "./helpers/server.ts";

// Configuration is read at the top and passed down: only the entry points read the environment.

const ROOT = new URL("..", import.meta.url).pathname;
// src/touched-memory.ts is the first step of src/main.ts: the process's allocator setting, read before anything is loaded.
const ENTRY_POINTS = ["src/main.ts", "src/cli.ts", "src/touched-memory.ts"];

test("only the entry points read process.env; everything else gets the values passed down", async () => {
  const readers: string[] = [];
  for (const dir of ["src", "workers"]) {
    for await (const path of new Glob(`${dir}/**/*.ts`).scan(ROOT)) {
      if (!ENTRY_POINTS.includes(path) && (await Bun.file(ROOT + path).text()).includes("process.env")) readers.push(path);
    }
  }
  expect(readers).toEqual([]);
});

/** The provider ids /v1/providers lists on a server started with `env`. */
async function servedProviders(env: Record<string, string>): Promise<string[]> {
  const server = await startTestServer(env);
  try {
    return Object.keys(((await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, unknown> }).providers);
  } finally {
    await server.stop(0);
  }
}

test.skipIf(!localSttAvailable)("POCKETSPHINX_MODEL_DIR reaches the recognizer from the config it was started with", async () => {
  expect(await servedProviders({})).toContain("pocketsphinx");
  expect(await servedProviders({ POCKETSPHINX_MODEL_DIR: "/nonexistent/pocketsphinx-model" })).not.toContain("pocketsphinx");
});
