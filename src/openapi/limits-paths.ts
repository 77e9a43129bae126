import type { DocumentPart } from "./document-types.ts";
import { failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, json } from "./operation.ts";
import { array, integer, nullable, number, object, ref, string } from "./schema.ts";
import { BEARER } from "./security.ts";

// A tenant's limits and each key's (docs/limits.md): what `POST /account/keys` takes, and
// `GET /account/limits`, which reads them all with the spend and use of now.

const BUDGET = "USD, at most 6 decimals; spend counts on the UTC day (month) each request started";
const limitMembers = {
  max_sessions: integer("WebSocket sessions and streaming HTTP answers in flight at once", { minimum: 0 }),
  usd_per_day: number(`A budget per UTC day: ${BUDGET}`, { minimum: 0 }),
  usd_per_month: number(`A budget per UTC month: ${BUDGET}`, { minimum: 0 }),
};

/** What a tenant may give its new key: each optional, null for none, none above the account's own. */
export const KEY_LIMITS_BODY = object({}, Object.fromEntries(Object.entries(limitMembers).map(([name, schema]) => [name, nullable(schema)])), "The key's own limits, applied inside the account's");

const use = {
  limits: ref("Limits"),
  spent_today_usd: number("Billed today (UTC) on requests that started today"),
  spent_this_month_usd: number("Billed this month (UTC)"),
};
const live = {
  sessions: integer("In flight now (present when the live counters run)"),
  requests_last_minute: integer("HTTP requests and session opens in the last minute (present when the live counters run)"),
};

export const limitsPaths: DocumentPart = {
  schemas: {
    Limits: object({}, { ...limitMembers, requests_per_minute: integer("HTTP requests and session opens per minute (set by the operator)", { minimum: 0 }) }, "A member absent: no limit"),
    LimitsReport: object({
      day: string("The UTC day the spend is of (`YYYY-MM-DD`)"),
      month: string("The UTC month (`YYYY-MM`)"),
      tenant: object(use, live, "The account's own limits and what its keys use of them together"),
      keys: array(object({ id: string(), prefix: string(), ...use }, live), "Every live key, newest first"),
    }),
  },
  paths: {
    "/account/limits": {
      get: {
        operationId: "getLimits",
        summary: "The account's limits and each live key's, with what is used of them now",
        description:
          "Limits are set by the operator (`limits set`) and, for a key's budgets and sessions, by the account in `POST /account/keys`. A change reaches every server within `ACCESS_CHECK_INTERVAL_MS`.",
        tags: ["account"],
        security: BEARER,
        responses: { 200: answer("The limits and their use", json(ref("LimitsReport"))), ...failures("native", { 400: "`invalid_request`: any query parameter", ...KEY_FAILURES }) },
      },
    },
  },
};
