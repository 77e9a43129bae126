import Stripe from "stripe";

// A fake of the Stripe API on loopback, enough for Checkout: `POST /v1/checkout/sessions` as the
// official SDK sends it (form-encoded, Bearer secret key, Idempotency-Key replays the first
// answer), and a way to pay a session: Stripe then delivers a signed `checkout.session.completed`
// event to the webhook endpoint.

export interface FakeStripe {
  url: string;
  /** Checkout sessions created, by id, with the form fields Stripe received. */
  sessions: Map<string, { id: string; form: URLSearchParams; amount: number; idempotencyKey: string | null }>;
  /** Delivers `checkout.session.completed` for the session to `webhookUrl`, signed with `secret`. */
  pay(sessionId: string, webhookUrl: string, secret: string, options?: { badSignature?: boolean; eventId?: string }): Promise<Response>;
  stop(): void;
}

export function startFakeStripe(secretKey: string): FakeStripe {
  const sessions: FakeStripe["sessions"] = new Map();
  const replies = new Map<string, unknown>();
  let n = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (req.headers.get("authorization") !== `Bearer ${secretKey}`) {
        return Response.json({ error: { type: "invalid_request_error", message: "Invalid API Key provided" } }, { status: 401 });
      }
      if (req.method !== "POST" || url.pathname !== "/v1/checkout/sessions") {
        return Response.json({ error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${url.pathname})` } }, { status: 404 });
      }
      const key = req.headers.get("idempotency-key");
      if (key && replies.has(key)) return Response.json(replies.get(key));
      const form = new URLSearchParams(await req.text());
      const id = `cs_test_${++n}_${crypto.randomUUID().replaceAll("-", "")}`;
      const amount = Number(form.get("line_items[0][price_data][unit_amount]"));
      const session = {
        id,
        object: "checkout.session",
        mode: form.get("mode"),
        status: "open",
        payment_status: "unpaid",
        amount_total: amount,
        currency: form.get("line_items[0][price_data][currency]"),
        client_reference_id: form.get("client_reference_id"),
        metadata: { top_up_id: form.get("metadata[top_up_id]") },
        expires_at: Number(form.get("expires_at")),
        url: `https://checkout.stripe.test/c/pay/${id}`,
      };
      sessions.set(id, { id, form, amount, idempotencyKey: key });
      if (key) replies.set(key, session);
      return Response.json(session);
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    sessions,
    async pay(sessionId, webhookUrl, secret, options = {}) {
      const payload = JSON.stringify({
        id: options.eventId ?? `evt_${crypto.randomUUID().replaceAll("-", "")}`,
        object: "event",
        type: "checkout.session.completed",
        created: Math.floor(Date.now() / 1000),
        data: { object: { id: sessionId, object: "checkout.session", status: "complete", payment_status: "paid", amount_total: sessions.get(sessionId)?.amount } },
      });
      const header = await Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: options.badSignature ? "whsec_wrong" : secret });
      return fetch(webhookUrl, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": header }, body: payload });
    },
    stop: () => server.stop(true),
  };
}
