import { queryOf } from "../api.ts";
import { when } from "../format.ts";
import { useApi } from "../use-api.ts";
import { ListTable, usePages } from "./pager.tsx";

interface Dictionary {
  id: string;
  name: string;
  description: string | null;
  version_id: string;
  rules_count: number;
  created_at: string;
}

/** `GET /v1/pronunciation-dictionaries`: the account's dictionaries, newest first, a page at a time (docs/pronunciation.md). */
export function Dictionaries({ apiKey, round }: { apiKey: string; round: number }) {
  const { cursor, first, Pager } = usePages();
  const { data, error } = useApi<{ dictionaries: Dictionary[]; next_cursor: string | null }>(`/v1/pronunciation-dictionaries${queryOf({ page_size: 10, cursor })}`, apiKey, round);
  return (
    <>
      {data && data.dictionaries.length === 0 && first && <p>No dictionaries yet: make one with POST /v1/pronunciation-dictionaries, then name it in speech requests.</p>}
      <ListTable error={error} testId="dictionaries" caption="Pronunciation dictionaries, newest first" columns={["Name", "Id", "Rules", "Latest version", "Created"]}>
        {data?.dictionaries.map((d) => (
          <tr>
            <td data-label="Name">{d.name}</td>
            <td data-label="Id">
              <code>{d.id}</code>
            </td>
            <td data-label="Rules">{d.rules_count}</td>
            <td data-label="Latest version">
              <code>{d.version_id}</code>
            </td>
            <td data-label="Created">{when(d.created_at)}</td>
          </tr>
        ))}
      </ListTable>
      <Pager next={data?.next_cursor} />
    </>
  );
}
