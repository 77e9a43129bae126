import { describe, expect, test } from "bun:test";
import type { Binding } from "../src/catalogue/types.ts";
import { ApiError, ProviderError, ProviderOverloaded } from "../src/errors.ts";
import { createLogger } from "../src/log.ts";
import { ProviderHealth } from "../src/routing/health.ts";

// Provider health by its rules, on a clock the test moves (the server's own tests are
// provider-health-server.test.ts; the candidate loop's part: session-lifecycle.test.ts): when a
// circuit opens, how its cooldown grows, who probes it, what counts against a provider.

const binding = (provider: string, id = "m") => ({ capability: "tts", id, canonical: `${provider}/${id}`, provider: { id: provider } }) as unknown as Binding;
const a = binding("a");
const refused = () => new ProviderError("connection refused", true);

function healthOn(config = { failureThreshold: 3, cooldownMs: 1000, cooldownMaxMs: 3000 }) {
  const lines: { level: string; msg: string; status?: string; provider?: string }[] = [];
  const log = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) });
  let now = 1_000_000;
  const health = new ProviderHealth(config, log, () => now);
  const fail = (target: Binding, err: unknown = refused()) => health.attempt(target)!.failed(err);
  return { health, lines, fail, advance: (ms: number) => (now += ms), now: () => now };
}

describe("a binding's circuit", () => {
  test("opens at the threshold of consecutive provider failures; a success before it starts the count again", () => {
    const { health, fail } = healthOn();
    fail(a);
    fail(a);
    health.attempt(a)!.served();
    expect(health.view(a)).toMatchObject({ status: "up", consecutive_failures: 0 });
    fail(a);
    fail(a);
    expect(health.view(a)).toMatchObject({ status: "degraded", consecutive_failures: 2, retry_at: null });
    fail(a);
    expect(health.view(a)).toMatchObject({ status: "down", consecutive_failures: 3, cooldown_ms: 1000, last_failure: { reason: "connection refused" } });
    expect(health.attempt(a)).toBeUndefined();
  });

  test("the cooldown doubles at each failed probe up to its cap, and a success brings it back to the first", () => {
    const { health, fail, advance, now } = healthOn();
    for (let i = 0; i < 3; i++) fail(a);
    const cooldowns = [health.view(a).cooldown_ms];
    for (let i = 0; i < 3; i++) {
      expect(health.view(a).retry_at).toBe(new Date(now() + cooldowns.at(-1)!).toISOString());
      advance(cooldowns.at(-1)!);
      expect(health.view(a).status).toBe("degraded");
      fail(a); // the probe fails
      cooldowns.push(health.view(a).cooldown_ms);
    }
    expect(cooldowns).toEqual([1000, 2000, 3000, 3000]);
    advance(3000);
    health.attempt(a)!.served();
    expect(health.view(a)).toMatchObject({ status: "up", consecutive_failures: 0, cooldown_ms: null });
    for (let i = 0; i < 3; i++) fail(a);
    expect(health.view(a).cooldown_ms).toBe(1000);
  });

  test("after the cooldown one session probes at a time; the others skip it until the probe's verdict", () => {
    const { health, fail, advance } = healthOn();
    for (let i = 0; i < 3; i++) fail(a);
    advance(1000);
    const probe = health.attempt(a)!;
    expect(probe).toBeDefined();
    expect(health.attempt(a)).toBeUndefined();
    expect(health.usable(a)).toBe(false);
    // A probe whose session ended first gives no verdict: the next session probes.
    probe.released();
    const next = health.attempt(a)!;
    expect(health.attempt(a)).toBeUndefined();
    next.served();
    expect(health.view(a).status).toBe("up");
    expect(health.attempt(a)).toBeDefined();
  });

  test("a failure after the attempt served (mid-session) counts, as if it had not served: three such sessions open the circuit; a probe that serves then fails reopens it for twice as long", () => {
    const { health, advance } = healthOn();
    const servedThenFailed = () => {
      const attempt = health.attempt(a)!;
      attempt.served();
      attempt.failed(refused());
      attempt.released(); // the candidate loop's end: nothing more
    };
    servedThenFailed();
    expect(health.view(a)).toMatchObject({ status: "degraded", consecutive_failures: 1 });
    servedThenFailed();
    servedThenFailed();
    expect(health.view(a)).toMatchObject({ status: "down", consecutive_failures: 3, cooldown_ms: 1000 });
    advance(1000);
    const probe = health.attempt(a)!;
    probe.served();
    expect(health.view(a)).toMatchObject({ status: "up", consecutive_failures: 0 });
    const other = health.attempt(a)!; // no probe holds it any longer
    probe.failed(refused());
    expect(health.view(a)).toMatchObject({ status: "down", consecutive_failures: 4, cooldown_ms: 2000 });
    other.released();
    // Another session's success after it served: its later failure counts from that success.
    advance(2000);
    const first = health.attempt(a)!;
    first.served();
    health.attempt(a)!.served();
    first.failed(refused());
    expect(health.view(a)).toMatchObject({ status: "degraded", consecutive_failures: 1 });
  });

  test("failures of sessions begun before it opened neither reopen it nor lengthen its cooldown", () => {
    const { health, advance } = healthOn();
    const early = [0, 1, 2, 3, 4].map(() => health.attempt(a)!);
    for (const attempt of early.slice(0, 3)) attempt.failed(refused());
    const retryAt = health.view(a).retry_at;
    early[3].failed(refused());
    expect(health.view(a)).toMatchObject({ status: "down", retry_at: retryAt, cooldown_ms: 1000 });
    advance(1000);
    early[4].failed(refused()); // half-open: only the probe's failure reopens it
    expect(health.view(a).status).toBe("degraded");
  });

  test("only the provider's failures count: a client's mistake, a provider at capacity, our own errors do not", () => {
    const { health, fail } = healthOn();
    for (let i = 0; i < 5; i++) {
      fail(a, new ProviderError("unknown voice", false, "voice"));
      fail(a, new ProviderOverloaded("no decoder free", 2));
      fail(a, new ApiError("insufficient_balance"));
    }
    expect(health.view(a)).toMatchObject({ status: "up", consecutive_failures: 0, last_failure: null });
  });

  test("health is per binding: the same provider's other model stays up", () => {
    const { health, fail } = healthOn();
    const other = binding("a", "other");
    for (let i = 0; i < 3; i++) fail(a);
    expect(health.status(a)).toBe("down");
    expect(health.status(other)).toBe("up");
    expect(health.attempt(other)).toBeDefined();
  });

  test("a threshold of 0 never opens a circuit, though its failures show", () => {
    const { health, fail } = healthOn({ failureThreshold: 0, cooldownMs: 1000, cooldownMaxMs: 1000 });
    for (let i = 0; i < 10; i++) fail(a);
    expect(health.view(a)).toMatchObject({ status: "degraded", consecutive_failures: 10 });
    expect(health.attempt(a)).toBeDefined();
  });

  test("one log line per change of status: a warning when it goes down, information when it degrades or is back up", () => {
    const { health, fail, advance, lines } = healthOn();
    for (let i = 0; i < 3; i++) fail(a);
    advance(1000);
    health.attempt(a)!.served();
    const told = lines.map((l) => `${l.level} ${l.status}`);
    expect(told).toEqual(["info degraded", "warn down", "info degraded", "info up"]);
    expect(lines[1]).toMatchObject({ provider: "a", msg: "provider down: skipped until its cooldown ends" });
  });
});
