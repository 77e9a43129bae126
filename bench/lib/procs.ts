import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Other processes of a benchmark (router, relay, fake upstreams): started, their first line read
// (a JSON object with their URL), and their CPU time read from /proc.

const root = new URL("../..", import.meta.url).pathname;

export interface Proc {
  proc: Bun.Subprocess<"ignore", "pipe", "inherit">;
  info: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The allocator setting the server gives itself (src/touched-memory.ts), for every process a bench
 * starts: its router does not go through src/main.ts, and the relay, the floor, runs on the same runtime.
 */
export const SERVER_RUNTIME = { MIMALLOC_PURGE_DELAY: "-1" };

/**
 * `cwd`: another checkout of the project (an A/B comparison against its code). The process prints
 * its address as a JSON line with a `url`; what else it writes to stdout (log lines) goes on to
 * this process's stderr, read as it comes so that a chatty server never blocks on a full pipe.
 */
export async function spawnBun(args: string[], env: Record<string, string> = {}, cwd = root): Promise<Proc> {
  const proc = Bun.spawn(["bun", ...args], { cwd, env: { ...SERVER_RUNTIME, ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const lines = stdoutLines(proc.stdout);
  let info: Proc["info"] | undefined;
  while (!info) {
    const { value: line, done } = await lines.next();
    if (done) throw new Error(`${args.join(" ")} exited before it printed its address`);
    info = addressIn(line);
    if (!info) process.stderr.write(`${line}\n`);
  }
  void (async () => {
    for await (const line of lines) process.stderr.write(`${line}\n`);
  })();
  return {
    proc,
    info,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

async function* stdoutLines(stdout: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stdout) {
    text += decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    text = lines.pop()!;
    yield* lines;
  }
  if (text) yield text;
}

/** A line that is the process's address: JSON with a `url` (a log line is not). */
function addressIn(line: string): Proc["info"] | undefined {
  try {
    const parsed = JSON.parse(line) as Proc["info"];
    return typeof parsed?.url === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The router (bench/bench-server.ts) on loopback with a fresh SQLite database named after the benchmark, logging nothing, with `env` added. */
export function spawnRouter(name: string, env: Record<string, string>): Promise<Proc> {
  const database = `sqlite://${join(mkdtempSync(join(tmpdir(), `bench-${name}-`)), "db.sqlite")}`;
  return spawnBun(["bench/bench-server.ts"], { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: database, ...env });
}

/** Several routers (bench/bench-server.ts) serving one port (`REUSE_PORT`, the kernel spreading connections) on one database: several event loops, as docs/deployment.md runs them. */
export async function spawnRouters(n: number, env: Record<string, string>): Promise<Proc[]> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = String(probe.port);
  probe.stop(true);
  const routers: Proc[] = [];
  for (let i = 0; i < n; i++) routers.push(await spawnBun(["bench/bench-server.ts"], { ...env, PORT: port, REUSE_PORT: "true" }));
  return routers;
}

/** The threads of a process that are not its event loop, by what they do (their names as the runtime gives them). */
export interface ThreadCpu {
  /** JavaScriptCore's compiler threads (`JITWorker`): tiering code up. */
  compiler: number;
  /** Worker threads (`Worker`): the router's SQLite writer, its VAD and codec pools. */
  workers: number;
  /** The garbage collector's helpers (`HeapHelper`). */
  gc: number;
}

/** CPU time of processes so far, in µs, summed: their main threads (the event loops), all their threads, and the other threads by kind. */
export function cpuMicros(pids: number | number[]): { main: number; all: number; threads: ThreadCpu } {
  if (Array.isArray(pids)) {
    const each = pids.map((pid) => cpuMicros(pid));
    const sum = (f: (c: (typeof each)[number]) => number) => each.reduce((n, c) => n + f(c), 0);
    return { main: sum((c) => c.main), all: sum((c) => c.all), threads: byKind((kind) => sum((c) => c.threads[kind])) };
  }
  const pid = pids;
  const main = scheduled(pid, pid);
  // utime and stime, fields 14 and 15, in clock ticks (100 per second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  const all = (Number(fields[11]) + Number(fields[12])) * 10_000;
  const threads = byKind(() => 0);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const kind = THREAD_KINDS[readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim()];
      if (kind) threads[kind] += scheduled(pid, Number(tid));
    } catch {} // a thread that ended meanwhile
  }
  return { main, all, threads };
}

const THREAD_KINDS: Record<string, keyof ThreadCpu> = { JITWorker: "compiler", Worker: "workers", HeapHelper: "gc" };

/** A `ThreadCpu` whose every kind is `of(kind)`. */
const byKind = (of: (kind: keyof ThreadCpu) => number): ThreadCpu => ({ compiler: of("compiler"), workers: of("workers"), gc: of("gc") });

/** A thread's time on a CPU so far, in µs (/proc's scheduler clock, in ns). */
const scheduled = (pid: number, tid: number) => Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1000;

/** CPU a process (or several, summed) spent while `fn` ran, in µs. */
export async function cpuDuring<T>(pid: number | number[], fn: () => Promise<T>): Promise<{ result: T; main: number; all: number; threads: ThreadCpu }> {
  const before = cpuMicros(pid);
  const result = await fn();
  const after = cpuMicros(pid);
  return {
    result,
    main: after.main - before.main,
    all: after.all - before.all,
    threads: byKind((kind) => after.threads[kind] - before.threads[kind]),
  };
}
