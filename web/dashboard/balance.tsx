import { credits, usd, when } from "../format.ts";

export interface BalanceView {
  state: "ok" | "exhausted";
  paid_credits: number;
  spendable_paid_credits: number;
  promotional_credits: number;
  paid_balance_usd: number;
  updated_at: string;
  promotion_grants: { name: string; remaining_credits: number; remaining_usd: number; expires_at: string | null; eligible: boolean; targets: { provider: string; model: string }[] }[];
  /** Whether this server makes top-up links. */
  top_ups: boolean;
}

const targetsOf = (targets: { provider: string; model: string }[]) => (targets.length ? targets.map((t) => `${t.provider} / ${t.model}`).join(", ") : "any provider and model");

/** `GET /account/balance`: paid credits, what is spendable, and each grant with its targets and expiry. */
export function Balance({ balance }: { balance: BalanceView }) {
  return (
    <>
      <dl class="figures">
        <div>
          <dt>Paid balance</dt>
          <dd data-testid="paid-usd">{usd(balance.paid_balance_usd)}</dd>
        </div>
        <div>
          <dt>Spendable now</dt>
          <dd>{usd(balance.spendable_paid_credits / 1e6)}</dd>
        </div>
        <div>
          <dt>Promotional</dt>
          <dd>{usd(balance.promotional_credits / 1e6)}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd class={balance.state === "ok" ? "ok" : "warn"}>{balance.state === "ok" ? "Active" : balance.top_ups ? "Exhausted: top up to continue" : "Exhausted"}</dd>
        </div>
      </dl>
      <h3>Grants</h3>
      {balance.promotion_grants.length === 0 ? (
        <p>No promotional grants.</p>
      ) : (
        <div class="scroll">
          <table class="fit">
            <caption class="sr-only">Promotional grants</caption>
            <thead>
              <tr>
                <th scope="col">Grant</th>
                <th scope="col">Remaining</th>
                <th scope="col">Pays for</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {balance.promotion_grants.map((g) => (
                <tr>
                  <td data-label="Grant">
                    {g.name}
                    {!g.eligible && " (not usable now)"}
                  </td>
                  <td data-label="Remaining" title={credits(g.remaining_credits)}>
                    {usd(g.remaining_usd)}
                  </td>
                  <td data-label="Pays for">{targetsOf(g.targets)}</td>
                  <td data-label="Expires">{g.expires_at ? when(g.expires_at) : "never"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
