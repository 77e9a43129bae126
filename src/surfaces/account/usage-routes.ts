import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ACTIVITY_STATUSES, activityPage, dailyUsage, transactionsPage } from "../../ledger/activity.ts";
import { balanceView } from "../../ledger/balance.ts";
import { nativeAuth } from "../native/auth.ts";
import { cursor, day, integer, oneOf, pageBody, query, range, text, timestamp } from "./query.ts";

const ACTIVITY_PARAMS = ["start_time", "end_time", "provider", "model", "capability", "status", "limit", "cursor"];
const USAGE_PARAMS = ["start_date", "end_date"];
const TRANSACTION_PARAMS = ["limit", "cursor"];

/** `/account/balance`, `/account/activity`, `/account/usage`, `/account/transactions` (Bearer). */
export function usageRoutes(ctx: AppContext) {
  // Whether top-ups are on is the server's, not the tenant's: the CLI's `balance --json` has no such field.
  const balance = async (tenantId: string) => ({ ...(await balanceView(ctx.meter.ledger, tenantId)), top_ups: ctx.topUps.enabled });
  return new Elysia()
    .use(nativeAuth(ctx))
    .get("/account/balance", ({ principal }) => balance(principal.tenantId))
    .get("/account/activity", async ({ request, principal: { tenantId } }) => {
      const q = query(request, ACTIVITY_PARAMS);
      const { start, end } = range(timestamp(q, "start_time"), timestamp(q, "end_time"), ["start_time", "end_time"]);
      const page = await activityPage(ctx.database, {
        tenantId,
        start,
        end,
        provider: text(q, "provider"),
        model: text(q, "model"),
        capability: oneOf(q, "capability", ["tts", "stt"] as const),
        status: oneOf(q, "status", ACTIVITY_STATUSES),
        limit: integer(q, "limit", 1, 100, 50),
        after: cursor(q),
      });
      return pageBody(page);
    })
    .get("/account/usage", async ({ request, principal: { tenantId } }) => {
      const q = query(request, USAGE_PARAMS);
      const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
      const { start, end } = range(day(q, "start_date"), day(q, "end_date") ?? today, ["start_date", "end_date"]);
      const items = await dailyUsage(ctx.database, tenantId, start, new Date(end.getTime() + 86_400_000));
      return { start_date: start.toISOString().slice(0, 10), end_date: end.toISOString().slice(0, 10), items };
    })
    .get("/account/transactions", async ({ request, principal: { tenantId } }) => {
      const q = query(request, TRANSACTION_PARAMS);
      const page = await transactionsPage(ctx.database, tenantId, integer(q, "limit", 1, 100, 50), cursor(q));
      return pageBody(page);
    });
}
