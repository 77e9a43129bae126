import type { Subprocess } from "bun";
import { readFileSync, writeFileSync } from "node:fs";
import { tempDir } from "./temp-dirs.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export interface ServerProcess {
  url: string;
  wsUrl: (path: string) => string;
  proc: Subprocess<"ignore", "pipe", "inherit">;
}

/**
 * Starts `test/fakes/server-process.ts` with the given environment and waits until it listens. Its
 * temporary files go in a directory of the test run's (unless `env` names a TMPDIR): a server
 * killed with SIGKILL, as many tests stop theirs, cleans up nothing. No TTS cache unless `env`
 * sets one (as `testConfig`: tests count what providers are given).
 */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const proc = Bun.spawn(["bun", "test/fakes/server-process.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true", TTS_CACHE_BYTES: "0", TMPDIR: tempDir("voxroute-process-"), ...env },
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

/** Kills the server with SIGKILL (it cleans up nothing) and waits until it is gone. */
export async function killServer(server: ServerProcess): Promise<void> {
  server.proc.kill("SIGKILL");
  await server.proc.exited;
}

/** CPU time (user + system) the process has used so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The process's resident memory, in MiB. */
export function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/**
 * The process's peak resident memory since `resetPeak`, in MiB: what a moment of the work it did
 * meanwhile held, however short. Linux resets the peak on writing 5 to /proc/<pid>/clear_refs.
 */
export function peakRssMiB(pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/** Starts the peak over from the memory the process holds now (see peakRssMiB); returns that, in MiB. */
export function resetPeak(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  return peakRssMiB(pid);
}

/** What the server's main thread holds (JS heap in use plus buffers outside it), in MiB, from /metrics. */
export async function heldMiB(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^voxroute_${name} (\\S+)$`, "m").exec(text)![1]);
  return (metric("nodejs_heap_size_used_bytes") + metric("nodejs_external_memory_bytes")) / 2 ** 20;
}
