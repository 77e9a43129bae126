import type { AnyElysia } from "elysia";
import type { AppContext } from "../context.ts";

/** A group of routes, built from the application's context. */
export type Routes = (ctx: AppContext) => AnyElysia;

/** Mounts route groups on `app` in the order given (the order routes are matched in). */
export function mount<A extends AnyElysia>(app: A, ctx: AppContext, groups: Routes[]): A {
  for (const routes of groups) app.use(routes(ctx));
  return app;
}
