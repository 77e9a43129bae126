import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { limitsReport } from "../../limits/limits-report.ts";
import { nativeAuth } from "../native/auth.ts";
import { query } from "./query.ts";

/** `GET /account/limits` (Bearer): the account's and each live key's limits, with what is used of them now (docs/limits.md#reading-limits). */
export function limitsRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["account"] } }).use(nativeAuth(ctx)).get(
    "/account/limits",
    async ({ request, principal }) => {
      query(request, []);
      return limitsReport(ctx.database, principal.tenantId, ctx.limits);
    },
    { detail: { summary: "The account's limits and each live key's, with spend today and this month (UTC) and, where counted, sessions and requests now" } },
  );
}
