import { RedisClient } from "bun";
import { freePort } from "./free-port.ts";

// Tests that need Redis: the machine's (127.0.0.1:6379, or TEST_REDIS_URL) must answer where
// REQUIRE_REDIS=1 (CI), else they skip with a printed reason. Tests that stop Redis start a
// private redis-server of their own on another port.

const SHARED_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function reachable(): Promise<boolean> {
  const client = new RedisClient(SHARED_URL, { connectionTimeout: 2_000, autoReconnect: false });
  try {
    await client.send("PING", []);
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}

const serverInstalled = Bun.which("redis-server") !== null;
export const redisAvailable = serverInstalled && (await reachable());
if (!redisAvailable) {
  if (process.env.REQUIRE_REDIS === "1") throw new Error(`Redis is required (REQUIRE_REDIS=1) but ${serverInstalled ? `${SHARED_URL} is not reachable` : "redis-server is not installed"}`);
  console.warn(`skipping Redis tests: ${serverInstalled ? `${SHARED_URL} is not reachable (set TEST_REDIS_URL)` : "redis-server is not installed"}`);
}

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it answering (SIGSTOP) without losing what it holds; `resume` lets it answer again. */
  pause(): void;
  resume(): void;
}

/** A redis-server of the test's own (no persistence), on a free port; `stop` kills it, `start` brings it back on the same port, `pause` freezes it. */
export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let proc: ReturnType<typeof Bun.spawn> | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const start = async () => {
    proc = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdout: "ignore", stderr: "inherit" });
    for (let i = 0; i < 100; i++) {
      const client = new RedisClient(url, { connectionTimeout: 500, autoReconnect: false });
      try {
        await client.send("PING", []);
        return;
      } catch {
        await Bun.sleep(20);
      } finally {
        client.close();
      }
    }
    throw new Error(`redis-server on port ${port} did not answer`);
  };
  await start();
  return {
    url,
    port,
    start,
    pause: () => proc?.kill("SIGSTOP"),
    resume: () => proc?.kill("SIGCONT"),
    stop: async () => {
      proc?.kill("SIGKILL");
      await proc?.exited;
    },
  };
}
