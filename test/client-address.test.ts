import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { startTestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The client address behind proxies, seen where it matters: the per-address signup limit (ten
// codes per client address per window). Each proxy appends the address it saw to
// X-Forwarded-For; everything to the left of what your own proxies wrote is the client's to forge.

const forged = () => `192.0.2.${Math.floor(Math.random() * 250) + 1}`;

/** Asks for codes for new e-mail addresses, each request with the X-Forwarded-For `xff()` gives; returns the statuses. */
async function signups(url: string, count: number, xff: () => string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${url}/account/agent-signup`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": xff() },
      body: JSON.stringify({ email: `user-${crypto.randomUUID().slice(0, 8)}@example.com` }),
    });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

const limited = (statuses: number[]) => ({ served: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length });

describe("the per-address signup limit cannot be dodged with a forged X-Forwarded-For", () => {
  test("TRUST_PROXY=true: the rightmost entry (what the one proxy saw) is the client", async () => {
    const server = await startTestServer({ TRUST_PROXY: "true", DEV_OUTBOX_DIR: tempDir("outbox-") });
    try {
      expect(limited(await signups(server.url, 12, () => `${forged()}, ${forged()}, 198.51.100.1`))).toEqual({ served: 10, refused: 2 });
      // Another client behind the same proxy has its own allowance.
      expect(limited(await signups(server.url, 1, () => `${forged()}, 198.51.100.2`))).toEqual({ served: 1, refused: 0 });
    } finally {
      await server.stop(0);
    }
  }, 20_000);

  test("TRUST_PROXY_HOPS=2: the second entry from the right (what the outer proxy saw) is the client", async () => {
    const server = await startTestServer({ TRUST_PROXY_HOPS: "2", DEV_OUTBOX_DIR: tempDir("outbox-") });
    try {
      expect(limited(await signups(server.url, 12, () => `${forged()}, 198.51.100.3, 10.0.0.1`))).toEqual({ served: 10, refused: 2 });
      // The inner proxy's own address (rightmost) is not the client: another client gets through.
      expect(limited(await signups(server.url, 1, () => `198.51.100.4, 10.0.0.1`))).toEqual({ served: 1, refused: 0 });
    } finally {
      await server.stop(0);
    }
  }, 20_000);

  test("without a trusted proxy the header is ignored: the socket's peer is the client", async () => {
    const server = await startTestServer({ DEV_OUTBOX_DIR: tempDir("outbox-") });
    try {
      expect(limited(await signups(server.url, 11, () => `${forged()}`))).toEqual({ served: 10, refused: 1 });
    } finally {
      await server.stop(0);
    }
  }, 20_000);
});

test("configuration: TRUST_PROXY=true is one hop; TRUST_PROXY_HOPS counts them; a bad count is refused", () => {
  expect(loadConfig({}).trustProxyHops).toBe(0);
  expect(loadConfig({ TRUST_PROXY: "true" }).trustProxyHops).toBe(1);
  expect(loadConfig({ TRUST_PROXY_HOPS: "3" }).trustProxyHops).toBe(3);
  expect(() => loadConfig({ TRUST_PROXY_HOPS: "-1" })).toThrow(/TRUST_PROXY_HOPS/);
}, 20_000);
