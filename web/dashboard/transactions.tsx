import { queryOf } from "../api.ts";
import { usd, when } from "../format.ts";
import { useApi } from "../use-api.ts";
import { ListTable, usePages } from "./pager.tsx";

interface Transaction {
  id: string;
  created_at: string;
  type: string;
  amount_usd: number;
  description: string;
}

/** `GET /account/transactions`: grants, top-ups, adjustments and charges, newest first, a page at a time. */
export function Transactions({ apiKey, round }: { apiKey: string; round: number }) {
  const { cursor, Pager } = usePages();
  const { data, error } = useApi<{ items: Transaction[]; next_cursor: string | null }>(`/account/transactions${queryOf({ limit: 10, cursor })}`, apiKey, round);
  return (
    <>
      <ListTable error={error} testId="transactions" caption="Credit transactions, newest first" columns={["When", "Type", "Amount", "Description"]}>
        {data?.items.map((t) => (
          <tr>
            <td data-label="When">{when(t.created_at)}</td>
            <td data-label="Type">{t.type.replace("_", "-")}</td>
            <td data-label="Amount">{usd(t.amount_usd)}</td>
            <td data-label="Description">{t.description}</td>
          </tr>
        ))}
      </ListTable>
      <Pager next={data?.next_cursor} />
    </>
  );
}
