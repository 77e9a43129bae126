import type { Subprocess } from "bun";

const ROOT = new URL("../..", import.meta.url).pathname;

export interface ServerProcess {
  url: string;
  wsUrl: (path: string) => string;
  proc: Subprocess<"ignore", "pipe", "inherit">;
}

/** Starts `test/fakes/server-process.ts` with the given environment and waits until it listens. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const proc = Bun.spawn(["bun", "test/fakes/server-process.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server process exited before listening (code ${await proc.exited})`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const { url } = JSON.parse(text.split("\n")[0]) as { url: string };
  return { url, wsUrl: (path) => url.replace(/^http/, "ws") + path, proc };
}
