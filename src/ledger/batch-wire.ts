import type { Rational } from "../catalogue/price.ts";
import type { RecoverInput, SettleInput, SettlePart } from "./batch-requests.ts";
import type { BatchContext, BatchJob } from "./batch-process.ts";
import type { BillingTarget } from "./sources.ts";

// A ledger batch as JSON carries it to the SQLite worker (its procedure `ledgerBatch`): dates as
// epoch milliseconds, exact costs as decimal strings, bindings (catalogue objects, with their
// provider's) as the little billing reads of them. A JSON string crosses for a third of what
// cloning the objects costs the event loop (about 1 µs a request against 3).

type WireRational = [string, string];
type WirePart = Omit<SettlePart, "cost"> & { cost: WireRational };
type WireSettle = Omit<SettleInput, "cost" | "startedAt" | "finishedAt" | "parts"> & { cost: WireRational; startedAt: number; finishedAt: number; parts?: WirePart[] };
type WireJob =
  | Exclude<BatchJob, { kind: "settle" } | { kind: "recover" }>
  | { kind: "settle"; input: WireSettle }
  | { kind: "recover"; input: Omit<RecoverInput, "lapsedBefore"> & { lapsedBefore: number } };

export interface WireBatch {
  jobs: WireJob[];
  context: Omit<BatchContext, "now"> & { now: number };
}

const billing = ({ id, canonical, capability, provider }: BillingTarget): BillingTarget => ({ id, canonical, capability, provider: { id: provider.id } });
const toWire = (r: Rational): WireRational => [r.num.toString(), r.den.toString()];
const fromWire = ([num, den]: WireRational): Rational => ({ num: BigInt(num), den: BigInt(den) });

export function batchToWire(jobs: BatchJob[], context: BatchContext): WireBatch {
  return {
    context: { ...context, now: context.now.getTime() },
    jobs: jobs.map((job): WireJob => {
      if (job.kind === "reserve") return { kind: "reserve", input: { ...job.input, binding: billing(job.input.binding) } };
      if (job.kind === "recover") return { kind: "recover", input: { ...job.input, lapsedBefore: job.input.lapsedBefore.getTime() } };
      const { cost, startedAt, finishedAt, parts, binding, ...rest } = job.input;
      const settle: WireSettle = { ...rest, binding: billing(binding), cost: toWire(cost), startedAt: startedAt.getTime(), finishedAt: finishedAt.getTime() };
      if (parts) settle.parts = parts.map((p) => ({ ...p, binding: billing(p.binding), cost: toWire(p.cost) }));
      return { kind: "settle", input: settle };
    }),
  };
}

export function batchFromWire(wire: WireBatch): { jobs: BatchJob[]; context: BatchContext } {
  return {
    context: { ...wire.context, now: new Date(wire.context.now) },
    jobs: wire.jobs.map((job): BatchJob => {
      if (job.kind === "reserve") return job;
      if (job.kind === "recover") return { kind: "recover", input: { ...job.input, lapsedBefore: new Date(job.input.lapsedBefore) } };
      const { cost, startedAt, finishedAt, parts, ...rest } = job.input;
      const settle: SettleInput = { ...rest, cost: fromWire(cost), startedAt: new Date(startedAt), finishedAt: new Date(finishedAt) };
      if (parts) settle.parts = parts.map((p) => ({ ...p, cost: fromWire(p.cost) }));
      return { kind: "settle", input: settle };
    }),
  };
}
