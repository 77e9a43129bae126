// bun run bench:voices — GET /v1/voices over a catalogue of 10,000 voices (BENCH_VOICES), real HTTP
// requests from this process to the router in its own process: text search with facets, filters,
// broad prefixes, the whole catalogue faceted, `popular` pages of 100, and pages walked with a
// cursor. Each request is paired with a GET /v1/models sent just before it (a static answer of the
// same server, over the same connection): "added" is the percentile of the paired differences, what
// the search itself costs over answering at all. Requests go one at a time (no queueing), then 8 in
// flight. Target: p99 ≤ 5 ms for q with facets.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STYLES, USES } from "../test/fakes/many-voices.ts";
import { spawnBun } from "./lib/procs.ts";
import { paired, percentile } from "./lib/stats.ts";

const VOICES = Number(process.env.BENCH_VOICES ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1000);
const WARMUP = 200;

const router = await spawnBun(["bench/bench-server.ts"], {
  BENCH_VOICES: String(VOICES),
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn",
  DATABASE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-voices-")), "db.sqlite")}`,
});
const base = router.info.url;

/** Waits until the generated voices are searchable; the time from the server's first answer. */
async function untilListed(): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const res = await fetch(`${base}/v1/voices?provider=many&limit=1`);
    if (res.ok && ((await res.json()) as { total_count: number }).total_count === VOICES) return performance.now() - t0;
    await Bun.sleep(20);
  }
}

let seed = 1;
const pick = <T>(xs: readonly T[]) => xs[(seed = (seed * 48271) % 2147483647) % xs.length];
const SYLLABLES = ["al", "ar", "ka", "li", "ma", "no", "ra", "sa", "ta", "za"];

/** The request shapes measured: each returns the query of its next request. */
const SHAPES: { name: string; next: () => string }[] = [
  { name: "q=<word>, facets", next: () => `q=${pick([...STYLES, ...USES])}&include_facets=true` },
  { name: "q=<two words>, language, filter, facets", next: () => `q=${pick(STYLES)}+${pick(USES)}&language=en&filter=gender:female&include_facets=true` },
  { name: "q=<2-letter prefix>, facets, limit=100", next: () => `q=${pick(SYLLABLES)}&include_facets=true&limit=100` },
  { name: "all 10k, facets", next: () => "include_facets=true" },
  { name: "sort=popular, filter, limit=100", next: () => `sort=popular&filter=age:${pick(["young", "old", "middle_aged"])}&limit=100` },
  { name: "sort=name, language, facets", next: () => `sort=name&language=${pick(["de", "fr", "es", "ja"])}&include_facets=true` },
];

async function timed(path: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${base}${path}`);
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return ms;
}

/** `n` paired samples of a shape, `inFlight` lanes at once: the voices request and, just before it on the same lane, /v1/models. */
async function measure(next: () => string, n: number, inFlight: number): Promise<{ voices: number[]; models: number[] }> {
  const voices: number[] = [];
  const models: number[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) {
        models.push(await timed("/v1/models"));
        voices.push(await timed(`/v1/voices?${next()}`));
      }
    }),
  );
  return { voices, models };
}

/** Walks pages of 20 with the cursor: each page's time. */
async function walkPages(n: number): Promise<number[]> {
  const times: number[] = [];
  while (times.length < n) {
    let cursor: string | null = null;
    const q = `q=${pick(STYLES)}&include_facets=true`;
    do {
      const t0 = performance.now();
      const res: Response = await fetch(`${base}/v1/voices?${q}${cursor ? `&cursor=${cursor}` : ""}`);
      const page = (await res.json()) as { next_cursor: string | null };
      times.push(performance.now() - t0);
      cursor = page.next_cursor;
    } while (cursor && times.length < n);
  }
  return times;
}

const f = (x: number) => `${x.toFixed(2)} ms`;
const p99 = (xs: number[]) => (xs.length >= 200 ? f(percentile(xs, 99)) : "n/a");

try {
  const readyMs = await untilListed();
  console.log(`voxroute voice catalogue benchmark: ${VOICES} generated voices (+ Flite's and Pico's), ${SAMPLES} samples per row; ${navigator.hardwareConcurrency} cores`);
  console.log(`catalogue searchable ${readyMs.toFixed(0)} ms after the server's first answer`);
  await measure(SHAPES[0].next, WARMUP, 1);
  for (const inFlight of [1, 8]) {
    console.log(`\n${inFlight === 1 ? "one request at a time" : `${inFlight} requests in flight`}`);
    console.log(`${"shape".padEnd(44)} ${"p50".padStart(9)} ${"p99".padStart(9)}   added over /v1/models p50 / p99`);
    for (const shape of SHAPES) {
      const { voices, models } = await measure(shape.next, SAMPLES, inFlight);
      const added = paired(voices, models);
      console.log(`${shape.name.padEnd(44)} ${f(percentile(voices, 50)).padStart(9)} ${p99(voices).padStart(9)}   ${f(percentile(added, 50))} / ${p99(added)}`);
    }
  }
  const pages = await walkPages(SAMPLES);
  console.log(`\npages of 20 walked with the cursor (q=<word>, facets): p50 ${f(percentile(pages, 50))}  p99 ${p99(pages)}`);
} finally {
  await router.stop();
}
