import { authenticate, bearerToken } from "../../accounts/keys.ts";
import type { Binding } from "../../catalogue/types.ts";
import type { AppContext } from "../../context.ts";
import { ApiError, nativeEnvelope } from "../../errors.ts";
import type { Admission } from "../../sessions/tts-session.ts";

// What the native WebSocket channels check around the upgrade, in the interface's order.

type Status = (code: number, body: unknown) => unknown;

/** A plan, or the error planning raised (told before the upgrade when it is a 400, after it otherwise). */
export function tryPlan<P>(plan: () => P): { plan?: P; error?: unknown } {
  try {
    return { plan: plan() };
  } catch (error) {
    return { error };
  }
}

/**
 * Before the upgrade, possibly twice: read-only. A 400 from the query is answered as HTTP; a
 * known key whose account cannot pay is told too (402, or 422 for an unpriced model). Key and
 * permission errors are left to the session, which closes with 4401/4403 after the upgrade.
 */
export async function checkBeforeUpgrade(ctx: AppContext, request: Request, planned: { plan?: { candidates: Binding[] }; error?: unknown }, status: Status) {
  if (!planned.plan) {
    if (planned.error instanceof ApiError && planned.error.status === 400) return status(400, nativeEnvelope(planned.error));
    return;
  }
  const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization"))).catch(() => undefined);
  if (!principal) return;
  try {
    await ctx.meter.admit(principal, planned.plan.candidates);
  } catch (err) {
    if (err instanceof ApiError) return status(err.status, nativeEnvelope(err));
    throw err;
  }
}

/** The session's admission after the upgrade: the key, then the plan's own error, then billing. */
export function admitter(ctx: AppContext, request: Request, id: string, planned: { plan?: { candidates: Binding[] }; error?: unknown }): () => Promise<Admission> {
  return async () => {
    const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
    if (!planned.plan) throw planned.error;
    const candidates = await ctx.meter.admit(principal, planned.plan.candidates);
    const meter = ctx.meter.start(id, principal, "native");
    meter.prefetch(candidates[0]);
    return { candidates, meter };
  };
}
