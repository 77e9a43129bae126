import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { usd } from "../format.ts";
import { useApi } from "../use-api.ts";

interface UsageItem {
  date: string;
  requests: number;
  failed: number;
  characters: number;
  cached_characters: number;
  credits: number;
}

interface Day {
  date: string;
  requests: number;
  costUsd: number;
}

/** Every day of the answer's range, its keys summed; days without requests are zeros. */
function days(answer: { start_date: string; end_date: string; items: UsageItem[] }): Day[] {
  const byDate = new Map<string, Day>();
  for (let t = Date.parse(answer.start_date); t <= Date.parse(answer.end_date); t += 86_400_000) {
    const date = new Date(t).toISOString().slice(0, 10);
    byDate.set(date, { date, requests: 0, costUsd: 0 });
  }
  for (const item of answer.items) {
    const day = byDate.get(item.date);
    if (!day) continue;
    day.requests += item.requests;
    day.costUsd += item.credits / 1e6;
  }
  return [...byDate.values()];
}

function Chart({ data }: { data: Day[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: 220,
        scales: { x: { time: true }, cost: { range: (_u, _min, max) => [0, Math.max(max, 0.001)] }, requests: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
        axes: [{}, { scale: "cost", values: (_u, ticks) => ticks.map((t) => usd(t)), size: 70 }, { scale: "requests", side: 1, grid: { show: false } }],
        series: [
          {},
          { label: "Cost", scale: "cost", stroke: "#1d4ed8", fill: "rgba(29, 78, 216, 0.25)", paths: uPlot.paths.bars!({ size: [0.6, 40] }), value: (_u, v) => (v == null ? "—" : usd(v)) },
          { label: "Requests", scale: "requests", stroke: "#b45309", width: 2, points: { show: true } },
        ],
      },
      [data.map((d) => Date.parse(d.date) / 1000), data.map((d) => d.costUsd), data.map((d) => d.requests)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [data]);
  return <div ref={box} class="chart" role="img" aria-label="Daily cost and requests over the last 30 days; the same figures are in the table below" />;
}

/** `GET /account/usage` (the last 30 days, UTC) as a chart of cost and requests per day, with the same figures as a table. */
export function UsageChart({ apiKey, round }: { apiKey: string; round: number }) {
  const { data, error } = useApi<{ start_date: string; end_date: string; items: UsageItem[] }>("/account/usage", apiKey, round);
  const all = data ? days(data) : [];
  const used = all.filter((d) => d.requests > 0);
  const cached = data ? data.items.reduce((n, item) => n + item.cached_characters, 0) : 0;
  const characters = data ? data.items.reduce((n, item) => n + item.characters, 0) : 0;
  return (
    <>
      <p class="error" role="alert">
        {error}
      </p>
      {data && <Chart data={all} />}
      {cached > 0 && (
        <p data-testid="cache-savings">
          Cache savings: {cached} of {characters} characters were played from the TTS cache, with no request to a provider.
        </p>
      )}
      <details>
        <summary>As a table</summary>
        {used.length === 0 ? (
          <p>No requests in the last 30 days.</p>
        ) : (
          <div class="scroll">
            <table data-testid="usage">
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col">Requests</th>
                  <th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {used.map((d) => (
                  <tr>
                    <td>{d.date}</td>
                    <td>{d.requests}</td>
                    <td>{usd(d.costUsd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </>
  );
}
