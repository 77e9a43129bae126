import { useState } from "preact/hooks";
import { api, describeFailure } from "../api.ts";
import { usd, when } from "../format.ts";

interface Link {
  url: string;
  amount_usd: number;
  expires_at: string;
}

/**
 * `POST /account/top-up-link`: a payment link (Stripe Checkout, or the sandbox's page) opened in a
 * new tab; the balance is read again when this tab gets the focus back. One idempotency key per
 * attempt, so a double submit makes one link.
 */
export function TopUp({ apiKey }: { apiKey: string }) {
  const [amount, setAmount] = useState("10");
  const [link, setLink] = useState<Link>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      const l = await api<Link>("/account/top-up-link", { key: apiKey, body: { amount_usd: Number(amount) }, headers: { "idempotency-key": crypto.randomUUID() } });
      setLink(l);
      window.open(l.url, "_blank", "noopener");
    } catch (err) {
      setError(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <label for="top-up-amount">Amount in USD (5 to 1000)</label>
      <div class="row">
        <input id="top-up-amount" type="number" min="5" max="1000" step="0.01" required value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Top up
        </button>
      </div>
      {link && (
        <p role="status">
          <a href={link.url} target="_blank" rel="noopener">
            Pay {usd(link.amount_usd)}
          </a>{" "}
          (link valid until {when(link.expires_at)}). Your balance updates once the payment is confirmed.
        </p>
      )}
      <p class="error" role="alert">
        {error}
      </p>
    </form>
  );
}
