import type { HolderUse, Limits, LimitsReport } from "../../src/limits/types.ts";
import { usd } from "../format.ts";

// Limits beside the keys: what `GET /account/limits` says of the account and of each live key, and
// the optional budget and session fields of a new key (docs/limits.md).

/** `$5.00 a day · 4 sessions`, or `none`. */
export function limitsText(l: Limits): string {
  const parts = [
    l.usd_per_day !== undefined && `${usd(l.usd_per_day)} a day`,
    l.usd_per_month !== undefined && `${usd(l.usd_per_month)} a month`,
    l.max_sessions !== undefined && `${l.max_sessions} sessions at once`,
    l.requests_per_minute !== undefined && `${l.requests_per_minute} requests a minute`,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : "none";
}

/** Spend today and this month, and live use where it is counted. */
export function useText(u: HolderUse): string {
  const spent = `${usd(u.spent_today_usd)} today · ${usd(u.spent_this_month_usd)} this month`;
  return u.sessions === undefined ? spent : `${spent} · ${u.sessions} open now · ${u.requests_last_minute ?? 0} requests in the last minute`;
}

/** The account's own limits and what its keys use of them together. */
export function AccountLimits({ report }: { report: LimitsReport | undefined }) {
  if (!report) return null;
  return (
    <p data-testid="account-limits">
      <strong>Account limits:</strong> {limitsText(report.tenant.limits)}. <strong>Used:</strong> {useText(report.tenant)} <span class="muted">(days and months in UTC)</span>
    </p>
  );
}

export type NewKeyLimits = Partial<Record<"usd_per_day" | "usd_per_month" | "max_sessions", string>>;

const FIELDS = [
  { name: "usd_per_day", label: "Budget per day (USD)", step: "0.000001" },
  { name: "usd_per_month", label: "Budget per month (USD)", step: "0.000001" },
  { name: "max_sessions", label: "Sessions at once", step: "1" },
] as const;

/** The new key's optional limits; each left empty is none. */
export function NewKeyFields({ values, onInput }: { values: NewKeyLimits; onInput: (values: NewKeyLimits) => void }) {
  return (
    <fieldset class="filters">
      <legend>New key's limits (optional, within the account's)</legend>
      {FIELDS.map((f) => (
        <div>
          <label for={`new-key-${f.name}`}>{f.label}</label>
          <input id={`new-key-${f.name}`} type="number" min="0" step={f.step} value={values[f.name] ?? ""} onInput={(e) => onInput({ ...values, [f.name]: e.currentTarget.value })} />
        </div>
      ))}
    </fieldset>
  );
}

/** The body of `POST /account/keys`: the fields filled in, as numbers. */
export const newKeyBody = (values: NewKeyLimits) => Object.fromEntries(Object.entries(values).flatMap(([name, value]) => (value ? [[name, Number(value)]] : [])));
