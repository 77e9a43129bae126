// One instance's share of bench:ledger: `count` metered requests (reserve, then settle) with
// `concurrency` in flight, spread over the given tenants. Prints {done, ms}.
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { servedCatalogue } from "../src/providers/served-catalogue.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { Meter } from "../src/ledger/meter.ts";
import { createLogger } from "../src/log.ts";

const [tenantsArg, countArg, concurrencyArg] = process.argv.slice(2);
const tenants = tenantsArg.split(",");
const count = Number(countArg);
const concurrency = Number(concurrencyArg);

const database = await openDatabase(process.env.DATABASE_URL!);
const meter = new Meter(new Ledger(database), createLogger("silent"));
const flite = new Catalogue(servedCatalogue(loadConfig({}))).bindings.find((b) => b.provider.id === "flite")!;

let next = 0;
let done = 0;
async function lane() {
  while (next < count) {
    const i = next++;
    const request = meter.start(`bench_${process.pid}_${i}`, { tenantId: tenants[i % tenants.length] }, "bench");
    const units = 1 + (i % 97);
    const ok = await request.cover(flite, units);
    await request.settle({ binding: flite, status: "completed", outcome: "completed", units: ok ? units : 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
    done++;
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, lane));
console.log(JSON.stringify({ done, ms: performance.now() - t0 }));
await database.close();
