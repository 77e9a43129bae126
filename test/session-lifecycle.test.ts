import { describe, expect, test } from "bun:test";
import type { Binding } from "../src/catalogue/types.ts";
import type { MeteredRequest } from "../src/ledger/metered-request.ts";
import { createLogger } from "../src/log.ts";
import { Metrics } from "../src/metrics.ts";
import { ProviderError } from "../src/errors.ts";
import { ProviderHealth } from "../src/routing/health.ts";
import { openWithin, tryCandidates, type Attempt, type CandidateRun } from "../src/sessions/lifecycle/candidates.ts";
import { CreditGate } from "../src/sessions/lifecycle/credit-gate.ts";
import { type Outcome, recordEnding, type SessionEnding, type SessionRecord } from "../src/sessions/lifecycle/ending.ts";

// The lifecycle every session kind runs on, rule by rule, with scripted providers and meters
// (the kinds themselves are driven through their surfaces by the other tests).

const log = createLogger("silent");
const HEALTH = { failureThreshold: 3, cooldownMs: 1000, cooldownMaxMs: 60000 };
const observers = (health = new ProviderHealth(HEALTH, log)) => ({ log, metrics: new Metrics(false), health });
const binding = (id: string) => ({ id: "m", canonical: `${id}/m`, provider: { id } }) as unknown as Binding;
const candidates = ["a", "b", "c"].map(binding);

/** A run whose connect fails with the scripted errors, provider by provider. */
function scripted(failures: Record<string, Error>, canMoveOn = () => true) {
  const calls: string[] = [];
  let failedWith: unknown;
  let closed = false;
  const run: CandidateRun = {
    connect: async (b) => {
      calls.push(`connect ${b.provider.id}`);
      const err = failures[b.provider.id];
      if (err) throw err;
    },
    serve: async (b, served) => {
      calls.push(`serve ${b.provider.id}`);
      served();
    },
    canMoveOn,
    moveOn: () => void calls.push("move on"),
    attemptFailed: (b, reason) => void calls.push(`failed ${b.provider.id}: ${reason}`),
    closed: () => closed,
    fail: async (err) => {
      failedWith = err;
      closed = true;
    },
  };
  return { run, calls, failed: () => failedWith, close: () => (closed = true) };
}

describe("candidates", () => {
  test("a retryable failure moves on to the next candidate, recorded as an attempt", async () => {
    const s = scripted({ a: new ProviderError("refused", true) });
    const attempts: Attempt[] = [];
    await tryCandidates(candidates, s.run, attempts, observers());
    expect(s.calls).toEqual(["connect a", "failed a: refused", "move on", "connect b", "serve b"]);
    expect(attempts).toEqual([{ provider: "a", reason: "refused" }]);
    expect(s.failed()).toBeUndefined();
  });

  test("a failure that is not retryable (a bad voice) ends the session at once", async () => {
    const bad = new ProviderError("no such voice", false, "voice");
    const s = scripted({ a: bad });
    await tryCandidates(candidates, s.run, [], observers());
    expect(s.calls).toEqual(["connect a", "failed a: no such voice"]);
    expect(s.failed()).toBe(bad);
  });

  test("the kind's rule decides: no moving on once the client has had output", async () => {
    const s = scripted({ a: new ProviderError("reset", true) }, () => false);
    await tryCandidates(candidates, s.run, [], observers());
    expect(s.calls).toEqual(["connect a", "failed a: reset"]);
    expect((s.failed() as Error).message).toBe("reset");
  });

  test("the last candidate's failure ends the session; every attempt is listed and counted, each move on as a fallback", async () => {
    const s = scripted({ a: new ProviderError("1", true), b: new ProviderError("2", true), c: new ProviderError("3", true) });
    const attempts: Attempt[] = [];
    const seen = observers();
    await tryCandidates(candidates, s.run, attempts, seen);
    expect(attempts.map((a) => a.provider)).toEqual(["a", "b", "c"]);
    expect((s.failed() as Error).message).toBe("3");
    const counted = async (name: string) => Object.fromEntries((await seen.metrics.registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels.provider, v.value]));
    expect(await counted("voxroute_upstream_errors_total")).toEqual({ a: 1, b: 1, c: 1 });
    expect(await counted("voxroute_fallbacks_total")).toEqual({ a: 1, b: 1 });
  });

  test("a session closed while a candidate connects tries no other and records nothing", async () => {
    const s = scripted({});
    const attempts: Attempt[] = [];
    s.run.connect = async () => {
      s.close();
      throw new ProviderError("late", true);
    };
    await tryCandidates(candidates, s.run, attempts, observers());
    expect(attempts).toEqual([]);
    expect(s.failed()).toBeUndefined();
  });

  test("a failure while serving follows the same rule as one while connecting", async () => {
    const s = scripted({});
    let served = 0;
    s.run.serve = async () => {
      if (served++ === 0) throw new ProviderError("stream ended early", true);
    };
    const attempts: Attempt[] = [];
    await tryCandidates(candidates, s.run, attempts, observers());
    expect(attempts).toEqual([{ provider: "a", reason: "stream ended early" }]);
    expect(served).toBe(2);
  });

  test("an embedded engine's opening is not held to the connect timeout: busy is not down", async () => {
    let hand!: (v: string) => void;
    const opening = openWithin(new Promise<string>((r) => (hand = r)), 1, { id: "flite", embedded: true }, () => {});
    await Bun.sleep(20);
    hand("stream");
    expect(await opening).toBe("stream");
  });

  test("an opening past the connect timeout fails retryably, and what it hands over late is released", async () => {
    let hand!: (v: string) => void;
    const released: string[] = [];
    const opening = openWithin(new Promise<string>((r) => (hand = r)), 10, { id: "slowpoke" }, (late) => released.push(late));
    const err = await opening.catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: true, message: "slowpoke did not accept the session in time" });
    hand("stream");
    await Bun.sleep(0);
    expect(released).toEqual(["stream"]);
  });
});

describe("candidates and provider health", () => {
  const refused = () => new ProviderError("connection refused", true);
  /** A health on a clock the test moves, and `down` to open a binding's circuit. */
  function clocked() {
    let now = 0;
    const health = new ProviderHealth(HEALTH, log, () => now);
    const down = (b: Binding) => {
      for (let i = 0; i < 3; i++) health.attempt(b)!.failed(refused());
    };
    return { health, down, advance: (ms: number) => (now += ms) };
  }
  const [a, b, c] = candidates;

  test("an open candidate is skipped at once: never connected, the next serves", async () => {
    const { health, down } = clocked();
    down(a);
    const s = scripted({});
    await tryCandidates(candidates, s.run, [], observers(health));
    expect(s.calls).toEqual(["connect b", "serve b"]);
  });

  test("every candidate open: 503 provider_unavailable at once, retry_after when the first cooldown ends", async () => {
    const { health, down, advance } = clocked();
    down(a);
    advance(400);
    down(b);
    down(c);
    const s = scripted({});
    await tryCandidates(candidates, s.run, [], observers(health));
    expect(s.calls).toEqual([]);
    expect(s.failed()).toMatchObject({ code: "provider_unavailable", status: 503, closeCode: 1013, extra: { retry_after: 1 } });
  });

  test("a failure with only open candidates left ends the session with that failure, not a 503", async () => {
    const { health, down } = clocked();
    down(b);
    down(c);
    const s = scripted({ a: refused() });
    await tryCandidates(candidates, s.run, [], observers(health));
    expect(s.calls).toEqual(["connect a", "failed a: connection refused"]);
    expect((s.failed() as Error).message).toBe("connection refused");
  });

  test("failures while connecting and while serving count; the candidate that served closes its circuit", async () => {
    const { health } = clocked();
    const s = scripted({ a: refused() });
    s.run.serve = async (served, done) => {
      if (served === b) throw new ProviderError("upstream went silent", true);
      done();
    };
    await tryCandidates(candidates, s.run, [], observers(health));
    expect([a, b, c].map((x) => [health.view(x).status, health.view(x).consecutive_failures])).toEqual([
      ["degraded", 1],
      ["degraded", 1],
      ["up", 0],
    ]);
  });
});

describe("credit gate", () => {
  /** A gate over numbers (each item costs its value; 0 is free), with a meter answering as scripted. */
  function gate(answer: (units: number) => boolean | Promise<boolean>) {
    const admitted: number[] = [];
    const asked: number[] = [];
    const covers: number[] = [];
    let total = 0;
    let exhausted = 0;
    const failures: unknown[] = [];
    const g = new CreditGate<number>({
      usageWith: (n) => {
        asked.push(n);
        return n === 0 ? undefined : total + n;
      },
      cover: (units) => {
        covers.push(units);
        return answer(units);
      },
      admit: (n) => {
        total += n;
        admitted.push(n);
      },
      exhausted: () => void exhausted++,
      failed: (err) => void failures.push(err),
    });
    return { g, admitted, asked, covers, exhausted: () => exhausted, failures };
  }

  test("nothing goes through before admission; then everything, in order, as covered", () => {
    const t = gate(() => true);
    t.g.push(3);
    t.g.push(0);
    t.g.push(2);
    expect(t.admitted).toEqual([]);
    t.g.start();
    expect(t.admitted).toEqual([3, 0, 2]);
    expect(t.covers).toEqual([3, 5]); // free items ask the meter nothing
  });

  test("while the hold grows, later items wait behind the one being covered, also free ones", async () => {
    let grant!: (ok: boolean) => void;
    const t = gate((units) => (units === 5 ? new Promise((r) => (grant = r)) : true));
    t.g.start();
    t.g.push(4);
    t.g.push(1);
    t.g.push(0);
    t.g.push(1);
    expect(t.admitted).toEqual([4]);
    grant(true);
    await Bun.sleep(0);
    expect(t.admitted).toEqual([4, 1, 0, 1]);
    expect(t.asked).toEqual([4, 1, 0, 1]); // each item measured once, also the one that waited
  });

  test("when the balance cannot cover more, the rest is dropped and the session told once", () => {
    const t = gate((units) => units <= 5);
    t.g.start();
    t.g.push(5);
    t.g.push(1);
    t.g.push(1);
    expect(t.admitted).toEqual([5]);
    expect(t.exhausted()).toBe(1);
    t.g.push(0);
    expect(t.admitted).toEqual([5]);
  });

  test("a hold that fails to grow (a database error) is the session's failure; a refusal after a wait exhausts it", async () => {
    const t = gate(() => Promise.reject(new Error("db down")));
    t.g.start();
    t.g.push(1);
    await Bun.sleep(0);
    expect(t.failures.map((e) => (e as Error).message)).toEqual(["db down"]);
    const u = gate(() => Promise.resolve(false));
    u.g.start();
    u.g.push(1);
    await Bun.sleep(0);
    expect(u.exhausted()).toBe(1);
    expect(u.admitted).toEqual([]);
  });

  test("after a move to another binding, usage already covered is covered afresh (a fallback to a dearer provider is held for)", () => {
    const covers: number[] = [];
    const admitted: string[] = [];
    // Each item is the whole file: its usage does not grow from one candidate to the next.
    const g = new CreditGate<string>({
      usageWith: () => 10,
      cover: (units) => {
        covers.push(units);
        return true;
      },
      admit: (c) => void admitted.push(c),
      exhausted: () => {},
      failed: () => {},
    });
    g.start();
    g.push("first");
    g.push("same binding");
    expect(covers).toEqual([10]);
    g.coverAfresh();
    g.push("fallback");
    expect(covers).toEqual([10, 10]);
    expect(admitted).toEqual(["first", "same binding", "fallback"]);
  });

  test("a stopped gate admits nothing more, even when a pending cover resolves", async () => {
    let grant!: (ok: boolean) => void;
    const t = gate(() => new Promise((r) => (grant = r)));
    t.g.start();
    t.g.push(1);
    t.g.stop();
    grant(true);
    await Bun.sleep(0);
    expect(t.admitted).toEqual([]);
  });
});

describe("ending", () => {
  const admission = (meter: unknown, first = "first") => ({ meter: meter as MeteredRequest, candidates: [binding(first)] });
  const record = (over: Partial<SessionRecord> = {}): SessionRecord => ({ admission: undefined, binding: undefined, startedAt: new Date(), attempts: [], ...over });
  const endAs = (outcome: Outcome, status: "completed" | "failed", billed: number): SessionEnding => ({ outcome, status, billed, latencyMs: 1, details: {} });
  const deps = (metrics: Metrics, closes: unknown[] = []) => ({ log, metrics, surface: "native", port: { close: (code: number, reason: string) => void closes.push({ code, reason }) } });

  test("usage settles with the kind's status, then the last words and the close; the outcome is the metric's label", async () => {
    const order: string[] = [];
    const meter = { settle: async (o: unknown) => void order.push(`settle ${JSON.stringify(o)}`) };
    const metrics = new Metrics(false);
    const closes: unknown[] = [];
    await recordEnding(record({ admission: admission(meter), binding: binding("a") }), endAs("cut_off", "completed", 7), deps(metrics, closes), { code: 4402, reason: "insufficient_balance" }, () =>
      order.push("last words"),
    );
    expect(order).toHaveLength(2);
    expect(JSON.parse(order[0].slice("settle ".length))).toMatchObject({ status: "completed", units: 7, binding: { provider: { id: "a" } } });
    expect(order[1]).toBe("last words");
    expect(closes).toEqual([{ code: 4402, reason: "insufficient_balance" }]);
    expect(await metrics.registry.metrics()).toContain('voxroute_requests_total{surface="native",provider="a",status="cut_off"} 1');
  });

  test("a session no provider served is charged to the one tried last, else to its first candidate; a client gone gets no close", async () => {
    const settled: { binding: Binding }[] = [];
    const meter = { settle: async (o: { binding: Binding }) => void settled.push(o) };
    const closes: unknown[] = [];
    await recordEnding(record({ admission: admission(meter), tried: binding("tried") }), endAs("failed", "failed", 0), deps(new Metrics(false), closes), null);
    await recordEnding(record({ admission: admission(meter) }), endAs("client_left", "failed", 0), deps(new Metrics(false), closes), null);
    expect(settled.map((s) => s.binding.provider.id)).toEqual(["tried", "first"]);
    expect(closes).toEqual([]);
  });

  test("a session never admitted settles nothing and is counted against no provider", async () => {
    const metrics = new Metrics(false);
    await recordEnding(record(), endAs("failed", "failed", 0), deps(metrics), { code: 4401, reason: "invalid_api_key" });
    expect(await metrics.registry.metrics()).toContain('voxroute_requests_total{surface="native",provider="none",status="failed"} 1');
  });

  test("a settle that fails (logged by the meter) still ends the session", async () => {
    const meter = { settle: () => Promise.reject(new Error("db down")) };
    const metrics = new Metrics(false);
    const closes: unknown[] = [];
    await recordEnding(record({ admission: admission(meter), binding: binding("a") }), endAs("completed", "completed", 1), deps(metrics, closes), { code: 1000, reason: "tts_complete" });
    expect(await metrics.registry.metrics()).toContain('status="completed"} 1');
    expect(closes).toEqual([{ code: 1000, reason: "tts_complete" }]);
  });
});
