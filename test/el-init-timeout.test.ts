import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { connect, type Client } from "./helpers/ws-client.ts";

// `/el/…/stream-input` sockets whose handshake carries no valid key wait for the init frame, which
// may carry one: they get a short deadline for it and a cap per client address, so a crowd of
// silent sockets cannot be held open.

const INIT_TIMEOUT_MS = 400;
const PER_ADDRESS = 3;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(
    { EL_INIT_TIMEOUT_MS: String(INIT_TIMEOUT_MS), EL_UNAUTHENTICATED_PER_ADDRESS: String(PER_ADDRESS), TRUST_PROXY: "true" },
    { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 2)] } },
  );
});
afterAll(() => server.stop(0));

const PATH = "/el/v1/text-to-speech/any/stream-input?model_id=fixed/echo&output_format=pcm_16000";
const init = (extra: Record<string, unknown> = {}) => ({ text: " ", ...extra });

/** The upgrade as fetch sees it: only for answers before the upgrade (a 101 would not end). */
async function refusedUpgrade(headers: Record<string, string> = {}) {
  const res = await fetch(server.url + PATH, {
    headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers },
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, any> };
}

/** Resolves with the close, or "open" if the socket is still open after `ms`. */
const closedWithin = (c: Client, ms: number) => Promise.race([c.closed.then((r) => r.close), Bun.sleep(ms).then(() => "open" as const)]);

describe("the init frame deadline", () => {
  test("a socket that never sends its init frame is closed 4401 after EL_INIT_TIMEOUT_MS, with ElevenLabs' error frame", async () => {
    const c = connect(server.wsUrl(PATH));
    await c.opened;
    const openedAt = performance.now();
    const rec = await c.closed;
    const waited = performance.now() - openedAt;
    expect(rec.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "missing_api_key" }) });
    expect(rec.events).toEqual([{ message: expect.stringContaining("init frame"), error: "missing_api_key", code: 4401 }]);
    expect(waited).toBeGreaterThan(INIT_TIMEOUT_MS * 0.5);
  });

  test("an invalid key in the handshake is held to the same deadline, and told as invalid_api_key", async () => {
    const rec = await connect(server.wsUrl(PATH), { "xi-api-key": "vxr_not_a_key" }).closed;
    expect(rec.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
    expect(rec.events).toEqual([{ message: expect.any(String), error: "invalid_api_key", code: 4401 }]);
  });

  test("a valid key in the handshake is not: its init frame may come later (inactivity_timeout applies)", async () => {
    const { key } = await fundedAccount(server);
    const c = connect(server.wsUrl(PATH), { "xi-api-key": key });
    await c.opened;
    expect(await closedWithin(c, INIT_TIMEOUT_MS * 3)).toBe("open");
    c.send(init());
    c.send({ text: "Late but fine. " });
    c.send({ text: "" });
    expect((await c.closed).close.code).toBe(1000);
  });

  test("an init frame in time ends the deadline: the session then lives as long as it is used", async () => {
    const { key } = await fundedAccount(server);
    const c = connect(server.wsUrl(PATH));
    c.send(init({ xi_api_key: key }));
    await c.opened;
    expect(await closedWithin(c, INIT_TIMEOUT_MS * 3)).toBe("open");
    c.send({ text: "Still here. " });
    c.send({ text: "" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.some((e) => typeof e.audio === "string")).toBe(true);
  });
});

describe("the cap on sockets waiting for their init frame, per client address", () => {
  test("beyond EL_UNAUTHENTICATED_PER_ADDRESS the upgrade answers 429 in the {detail} envelope; other addresses and keyed handshakes are not counted; slots free up", async () => {
    const { key } = await fundedAccount(server);
    const waiting = Array.from({ length: PER_ADDRESS }, () => connect(server.wsUrl(PATH)));
    await Promise.all(waiting.map((c) => c.opened));

    const refused = await refusedUpgrade();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ detail: { status: "too_many_concurrent_requests", message: expect.stringContaining("init frame"), retry_after: 1, request_id: expect.any(String) } });
    expect(refused.retryAfter).toBe("1");
    // A refused socket as a browser sees it: the handshake fails.
    const browser = connect(server.wsUrl(PATH));
    expect(
      await browser.opened.then(
        () => "opened",
        (e) => String(e.message),
      ),
    ).toContain("429");

    // Another client address (behind the trusted proxy), and a handshake with a valid key, still get in.
    const elsewhere = connect(server.wsUrl(PATH), { "X-Forwarded-For": "10.9.9.9" });
    const keyed = connect(server.wsUrl(PATH), { "xi-api-key": key });
    await Promise.all([elsewhere.opened, keyed.opened]);

    // An init frame frees its socket's slot at once.
    waiting[0].send(init({ xi_api_key: key }));
    await Bun.sleep(50);
    const next = connect(server.wsUrl(PATH));
    await next.opened;

    // The deadline frees the others.
    await Promise.all([waiting[1].closed, waiting[2].closed, next.closed]);
    const after = Array.from({ length: PER_ADDRESS }, () => connect(server.wsUrl(PATH)));
    await Promise.all(after.map((c) => c.opened));
    for (const c of [...after, waiting[0], elsewhere, keyed]) c.ws.close();
  });

  test("a crowd of 200 silent sockets from one address: at most the cap is ever open, and all of those close by the deadline", async () => {
    const crowd = Array.from({ length: 200 }, () => connect(server.wsUrl(PATH), { "X-Forwarded-For": "10.7.7.7" }));
    const outcomes = await Promise.all(
      crowd.map((c) =>
        c.opened.then(
          () => "opened",
          () => "refused",
        ),
      ),
    );
    expect(outcomes.filter((o) => o === "opened").length).toBeLessThanOrEqual(PER_ADDRESS);
    const closes = await Promise.all(crowd.map((c) => c.closed.then((r) => r.close.code)));
    expect(closes.filter((code) => code === 4401).length).toBe(outcomes.filter((o) => o === "opened").length);
  });
});
