import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeStripe, type FakeStripe } from "./fakes/stripe.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

const SECRET_KEY = "sk_test_voxroute";
const WEBHOOK_SECRET = "whsec_test_voxroute";

let stripe: FakeStripe;
let server: TestServer;
let sandbox: TestServer;

beforeAll(async () => {
  stripe = startFakeStripe(SECRET_KEY);
  server = await startTestServer({ STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: stripe.url });
  sandbox = await startTestServer({ SANDBOX_PAYMENTS: "true" });
});
afterAll(async () => {
  await server.stop(0);
  await sandbox.stop(0);
  stripe.stop();
});

async function topUp(s: TestServer, body: unknown, idempotencyKey?: string) {
  const res = await fetch(`${s.url}/account/top-up-link`, {
    method: "POST",
    headers: { Authorization: `Bearer ${s.key}`, "content-type": "application/json", ...(idempotencyKey !== undefined ? { "Idempotency-Key": idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const paidCredits = async (s: TestServer) => (await s.ctx.meter.ledger.snapshot(s.tenantId)).balance.paidCredits;

/** `top_ups` of the balance: whether the server makes top-up links (the dashboard offers one only then). */
const topUpsOffered = async (s: TestServer) => ((await (await fetch(`${s.url}/account/balance`, { headers: { Authorization: `Bearer ${s.key}` } })).json()) as { top_ups: unknown }).top_ups;

describe("top-up links through Stripe Checkout (fake Stripe API on loopback)", () => {
  test("a link for the amount; the payment's webhook credits the account exactly once", async () => {
    const link = await topUp(server, { amount_usd: 25.5 }, "order-1");
    expect(link.status).toBe(200);
    expect(link.body.url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
    expect(link.body.amount_usd).toBe(25.5);
    expect(Date.parse(link.body.expires_at)).toBeGreaterThan(Date.now());
    const id = link.body.url.split("/").pop();
    const sent = stripe.sessions.get(id)!;
    expect(sent.form.get("line_items[0][price_data][unit_amount]")).toBe("2550");
    expect(sent.form.get("line_items[0][price_data][currency]")).toBe("usd");
    expect(sent.form.get("client_reference_id")).toBe(server.tenantId);

    const before = await paidCredits(server);
    const webhook = `${server.url}/webhooks/stripe`;
    const first = await stripe.pay(id, webhook, WEBHOOK_SECRET, { eventId: "evt_same" });
    expect(first.status).toBe(200);
    expect(await paidCredits(server)).toBe(before + 25_500_000);
    // Stripe retries deliveries, and may send the same payment as another event: credited once.
    expect((await stripe.pay(id, webhook, WEBHOOK_SECRET, { eventId: "evt_same" })).status).toBe(200);
    expect((await stripe.pay(id, webhook, WEBHOOK_SECRET, { eventId: "evt_other" })).status).toBe(200);
    expect(await paidCredits(server)).toBe(before + 25_500_000);

    const tx = (await (await fetch(`${server.url}/account/transactions`, { headers: { Authorization: `Bearer ${server.key}` } })).json()) as any;
    expect(tx.items.filter((t: any) => t.type === "top_up")).toEqual([expect.objectContaining({ credits: 25_500_000, amount_usd: 25.5 })]);
    expect(JSON.stringify(tx)).not.toContain(id);
  });

  test("a webhook with a bad signature is refused and credits nothing", async () => {
    const link = await topUp(server, { amount_usd: 5 });
    const before = await paidCredits(server);
    const res = await stripe.pay(link.body.url.split("/").pop(), `${server.url}/webhooks/stripe`, WEBHOOK_SECRET, { badSignature: true });
    expect(res.status).toBe(400);
    expect(await paidCredits(server)).toBe(before);
  });

  test("Idempotency-Key: same key and amount → the same link; same key, other amount → invalid_request", async () => {
    const made = stripe.sessions.size;
    const a = await topUp(server, { amount_usd: 10 }, "retry-me");
    const b = await topUp(server, { amount_usd: 10 }, "retry-me");
    expect(b).toEqual(a);
    expect(stripe.sessions.size).toBe(made + 1);
    expect(await topUp(server, { amount_usd: 11 }, "retry-me")).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    // Concurrent retries with one key make one checkout.
    const racing = await Promise.all(Array.from({ length: 5 }, () => topUp(server, { amount_usd: 12 }, "racing")));
    expect(new Set(racing.map((r) => r.body.url)).size).toBe(1);
  });

  test("bad amounts and keys are 400 invalid_request", async () => {
    for (const body of [{ amount_usd: 4.99 }, { amount_usd: 1000.01 }, { amount_usd: "20" }, { amount_usd: 10.001 }, {}, []]) {
      expect((await topUp(server, body)).body).toMatchObject({ error: "invalid_request" });
    }
    expect((await topUp(server, { amount_usd: 5 }, "k".repeat(256))).body).toMatchObject({ error: "invalid_request", param: "Idempotency-Key" });
    expect((await topUp(server, { amount_usd: 5 }, "")).body).toMatchObject({ error: "invalid_request" });
    expect((await topUp(server, { amount_usd: 1000 }, "k".repeat(255))).status).toBe(200);
  });

  test("a top-up needs a key", async () => {
    const res = await fetch(`${server.url}/account/top-up-link`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: 5 }) });
    expect(res.status).toBe(401);
  });
});

describe("sandbox payments (SANDBOX_PAYMENTS=true)", () => {
  test("the link opens a local checkout page whose button pays once", async () => {
    const link = await topUp(sandbox, { amount_usd: 7 }, "sbx-1");
    expect(link.status).toBe(200);
    expect(link.body.url).toStartWith(`${sandbox.url}/sandbox/checkout/sbx_`);
    const pageHtml = await (await fetch(link.body.url)).text();
    expect(pageHtml).toContain("7.00 USD");
    expect(pageHtml).toContain('<form method="post"');
    const before = await paidCredits(sandbox);
    for (let i = 0; i < 2; i++) expect((await fetch(`${link.body.url}/complete`, { method: "POST" })).status).toBe(200);
    expect(await paidCredits(sandbox)).toBe(before + 7_000_000);
    expect(await (await fetch(link.body.url)).text()).toContain("Paid");
  });

  test("the balance says top-ups are on with Stripe and with the sandbox", async () => {
    expect([await topUpsOffered(server), await topUpsOffered(sandbox)]).toEqual([true, true]);
  });

  test("without payment config, top-ups answer 503, the balance says they are off, and no sandbox page exists", async () => {
    const plain = await startTestServer();
    try {
      expect((await topUp(plain, { amount_usd: 5 })).status).toBe(503);
      expect(await topUpsOffered(plain)).toBe(false);
      expect((await fetch(`${plain.url}/sandbox/checkout/sbx_x`)).status).toBe(404);
      expect((await fetch(`${plain.url}/webhooks/stripe`, { method: "POST", body: "{}" })).status).toBe(404);
    } finally {
      await plain.stop(0);
    }
  });
});
