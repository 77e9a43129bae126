import { useState } from "preact/hooks";
import { queryOf } from "../api.ts";
import { usd, when } from "../format.ts";
import { useApi } from "../use-api.ts";

interface Activity {
  id: string;
  started_at: string;
  latency_ms: number;
  provider: string;
  model: string;
  capability: string;
  status: string;
  usage_unit: string;
  usage_amount: number;
  cost_usd: number;
  voice?: string;
  /** Characters of `usage_amount` the router's TTS cache played. */
  cached_units?: number;
}

interface Filters {
  start_time: string;
  end_time: string;
  provider: string;
  model: string;
  capability: string;
  status: string;
  limit: string;
}

const NO_FILTERS: Filters = { start_time: "", end_time: "", provider: "", model: "", capability: "", status: "", limit: "20" };

/** A `datetime-local` value (the browser's time zone) as RFC 3339. */
const rfc3339 = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** `GET /account/activity`: the interface's filters, and pages walked with `next_cursor` (and back). */
export function ActivityLog({ apiKey }: { apiKey: string }) {
  const [draft, setDraft] = useState(NO_FILTERS);
  const [filters, setFilters] = useState(NO_FILTERS);
  // The cursors of the pages before this one: "Previous" goes back through them.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const path = `/account/activity${queryOf({ ...filters, start_time: rfc3339(filters.start_time), end_time: rfc3339(filters.end_time), cursor })}`;
  const { data, error, loading, reload } = useApi<{ items: Activity[]; next_cursor: string | null }>(path, apiKey);
  const field = (name: keyof Filters) => ({ id: `activity-${name}`, value: draft[name], onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value }) });
  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(draft);
    setCursors([]);
  };

  return (
    <>
      <form class="filters" onSubmit={apply} aria-label="Activity filters">
        <div>
          <label for="activity-start_time">From</label>
          <input type="datetime-local" {...field("start_time")} />
        </div>
        <div>
          <label for="activity-end_time">To</label>
          <input type="datetime-local" {...field("end_time")} />
        </div>
        <div>
          <label for="activity-provider">Provider</label>
          <input maxLength={200} {...field("provider")} />
        </div>
        <div>
          <label for="activity-model">Model</label>
          <input maxLength={200} placeholder="cmu/flite" {...field("model")} />
        </div>
        <div>
          <label for="activity-capability">Capability</label>
          <select {...field("capability")}>
            <option value="">any</option>
            <option value="tts">TTS</option>
            <option value="stt">STT</option>
          </select>
        </div>
        <div>
          <label for="activity-status">Status</label>
          <select {...field("status")}>
            <option value="">any</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
            <option value="interrupted">interrupted</option>
          </select>
        </div>
        <div>
          <label for="activity-limit">Per page</label>
          <select {...field("limit")}>
            {["10", "20", "50", "100"].map((n) => (
              <option value={n}>{n}</option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit">Apply</button>
          <button type="button" class="secondary" onClick={reload}>
            Refresh
          </button>
        </div>
      </form>
      <p class="error" role="alert">
        {error}
      </p>
      <div class="scroll">
        <table aria-busy={loading} data-testid="activity">
          <caption class="sr-only">Requests, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Provider</th>
              <th scope="col">Model</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Usage</th>
              <th scope="col">Latency</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {data?.items.map((a) => (
              <tr>
                <td>{when(a.started_at)}</td>
                <td>{a.provider}</td>
                <td>
                  {a.model}
                  {a.voice && <span class="muted"> · {a.voice}</span>}
                </td>
                <td>{a.capability.toUpperCase()}</td>
                <td class={a.status === "completed" ? "" : "warn"}>{a.status}</td>
                <td>
                  {a.usage_amount} {a.usage_unit}
                  {a.cached_units ? <span class="muted"> · {a.cached_units} from the cache</span> : null}
                </td>
                <td>{a.latency_ms} ms</td>
                <td>{usd(a.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data && data.items.length === 0 && <p>No requests in this range.</p>}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!data?.next_cursor} onClick={() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}>
          Next page
        </button>
      </div>
    </>
  );
}
