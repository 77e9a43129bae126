import { useEffect, useState } from "preact/hooks";
import type { Session } from "../session.ts";
import { useApi } from "../use-api.ts";
import { ActivityLog } from "./activity.tsx";
import { Balance, type BalanceView } from "./balance.tsx";
import { Dictionaries } from "./dictionaries.tsx";
import { Keys } from "./keys.tsx";
import { TopUp } from "./top-up.tsx";
import { Transactions } from "./transactions.tsx";
import { UsageChart } from "./usage-chart.tsx";

/** The signed-in account: balance and top-up, usage, activity, transactions, pronunciation dictionaries and keys. */
export function Dashboard({ session }: { session: Session }) {
  // Read again when the tab gets the focus back: a payment finished in another tab shows at once.
  const [round, setRound] = useState(0);
  useEffect(() => {
    const again = () => setRound((r) => r + 1);
    window.addEventListener("focus", again);
    return () => window.removeEventListener("focus", again);
  }, []);
  const balance = useApi<BalanceView>("/account/balance", session.key, round);
  return (
    <>
      <h1>Dashboard</h1>
      <div class="grid">
        <section class="card" aria-labelledby="balance-title">
          <div class="title-row">
            <h2 id="balance-title">Balance</h2>
            <button type="button" class="secondary" onClick={() => setRound(round + 1)}>
              Refresh
            </button>
          </div>
          <p class="error" role="alert">
            {balance.error}
          </p>
          {balance.data && <Balance balance={balance.data} />}
        </section>
        <section class="card" aria-labelledby="top-up-title">
          <h2 id="top-up-title">Top up</h2>
          {balance.data?.top_ups && <TopUp apiKey={session.key} />}
          {balance.data?.top_ups === false && <p>This server takes no payments: it makes no top-up links. Its operator can add credits to your account.</p>}
        </section>
      </div>
      <section class="card" aria-labelledby="usage-title">
        <h2 id="usage-title">Daily usage</h2>
        <UsageChart apiKey={session.key} round={round} />
      </section>
      <section class="card" aria-labelledby="activity-title">
        <h2 id="activity-title">Activity</h2>
        <ActivityLog apiKey={session.key} />
      </section>
      <section class="card" aria-labelledby="transactions-title">
        <h2 id="transactions-title">Credit transactions</h2>
        <Transactions apiKey={session.key} round={round} />
      </section>
      <section class="card" aria-labelledby="dictionaries-title">
        <h2 id="dictionaries-title">Pronunciation dictionaries</h2>
        <Dictionaries apiKey={session.key} round={round} />
      </section>
      <section class="card" aria-labelledby="keys-title">
        <h2 id="keys-title">API keys</h2>
        <Keys session={session} />
      </section>
    </>
  );
}
