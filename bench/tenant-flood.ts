// One tenant's flood for bench:tenants, in a process of its own: COUNT WebSocket opens of
// /v1/tts at once (at the epoch millisecond AT, when given). Prints `{opened, refused, failed}`
// once every open has its answer, then holds the opened sockets until SIGTERM (HOLD=1) or closes
// them and exits.
const { URL: url, KEY: key, COUNT, AT, HOLD } = process.env as Record<string, string>;
const count = Number(COUNT);
if (AT) await Bun.sleep(Math.max(0, Number(AT) - Date.now()));

const outcomes = await Promise.all(
  Array.from(
    { length: count },
    () =>
      new Promise<{ ws: WebSocket; outcome: "opened" | "refused" | "failed" }>((resolve) => {
        const ws = new WebSocket(url!, { headers: { Authorization: `Bearer ${key}` } } as never);
        ws.onopen = () => resolve({ ws, outcome: "opened" });
        ws.onerror = (e) => resolve({ ws, outcome: /429/.test((e as ErrorEvent).message ?? "") ? "refused" : "failed" });
      }),
  ),
);
const tally = { opened: 0, refused: 0, failed: 0 };
for (const { outcome } of outcomes) tally[outcome]++;
console.log(JSON.stringify(tally));
const close = () => {
  for (const { ws } of outcomes) ws.close();
  process.exit(0);
};
if (HOLD === "1") process.on("SIGTERM", close);
else close();

export {};
