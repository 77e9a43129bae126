import { useState } from "preact/hooks";
import { queryOf } from "../api.ts";
import { usd, when } from "../format.ts";
import { useApi } from "../use-api.ts";

interface Transaction {
  id: string;
  created_at: string;
  type: string;
  amount_usd: number;
  description: string;
}

/** `GET /account/transactions`: grants, top-ups, adjustments and charges, newest first, a page at a time. */
export function Transactions({ apiKey, round }: { apiKey: string; round: number }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const { data, error } = useApi<{ items: Transaction[]; next_cursor: string | null }>(`/account/transactions${queryOf({ limit: 10, cursor: cursors.at(-1) })}`, apiKey, round);
  return (
    <>
      <p class="error" role="alert">
        {error}
      </p>
      <div class="scroll">
        <table class="fit" data-testid="transactions">
          <caption class="sr-only">Credit transactions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Type</th>
              <th scope="col">Amount</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {data?.items.map((t) => (
              <tr>
                <td data-label="When">{when(t.created_at)}</td>
                <td data-label="Type">{t.type.replace("_", "-")}</td>
                <td data-label="Amount">{usd(t.amount_usd)}</td>
                <td data-label="Description">{t.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button type="button" class="secondary" disabled={!data?.next_cursor} onClick={() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}>
          Older
        </button>
      </div>
    </>
  );
}
