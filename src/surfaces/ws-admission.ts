import { authenticate, type Principal } from "../accounts/keys.ts";
import type { Binding } from "../catalogue/types.ts";
import type { AppContext } from "../context.ts";
import { ApiError, sessionFailure, type ProviderOverloaded } from "../errors.ts";
import { candidatesForVoice, checkVoiceOwner } from "../routing/voices.ts";
import type { Admission } from "../sessions/admission.ts";

// What the WebSocket channels check around the upgrade, in the interface's order. Each surface
// brings its own key (header, query or first frame) and its own error envelope.

/** What a channel's query routes to: the candidates, and for TTS the voice they must take. */
export interface RoutedPlan {
  candidates: Binding[];
  voice?: string;
}

export type Planned<P extends RoutedPlan> = { plan?: P; error?: unknown };

/** The plan's candidates that take its voice (a 400 when none does). */
const candidatesOf = (ctx: AppContext, plan: RoutedPlan) => candidatesForVoice(plan.candidates, plan.voice, (id) => ctx.providers.get(id), ctx.customVoices);

/** A plan, or the error planning raised (told before the upgrade when it is a 400, after it otherwise). */
function tryPlan<P extends RoutedPlan>(plan: () => P): Planned<P> {
  try {
    return { plan: plan() };
  } catch (error) {
    return { error };
  }
}

/**
 * Plans each handshake once: the checks before the upgrade (which may run twice) and the
 * session's `open` share the plan of the same request (`args` are read from that request too).
 */
export function planPerRequest<P extends RoutedPlan, A extends unknown[]>(plan: (request: Request, ...args: A) => P): (request: Request, ...args: A) => Planned<P> {
  const plans = new WeakMap<Request, Planned<P>>();
  return (request, ...args) => {
    let planned = plans.get(request);
    if (!planned) plans.set(request, (planned = tryPlan(() => plan(request, ...args))));
    return planned;
  };
}

/**
 * The key's owner and what it may pay for, asked once per handshake: the checks before the upgrade
 * (which may run twice) and the session's admission after it share the answers, keyed by the
 * handshake's plan (one object per request) and the key.
 */
const asked = new WeakMap<Planned<RoutedPlan>, Map<string, Promise<unknown>>>();

function oncePerHandshake<T>(planned: Planned<RoutedPlan>, what: string, ask: () => Promise<T>): Promise<T> {
  let answers = asked.get(planned);
  if (!answers) asked.set(planned, (answers = new Map()));
  let answer = answers.get(what) as Promise<T> | undefined;
  if (!answer) answers.set(what, (answer = ask()));
  return answer;
}

const principalOf = (ctx: AppContext, planned: Planned<RoutedPlan>, key: string | undefined) => oncePerHandshake(planned, `key:${key}`, () => authenticate(ctx.database, key));

const candidatesFor = (ctx: AppContext, planned: Planned<RoutedPlan>, plan: RoutedPlan) => oncePerHandshake(planned, "candidates", () => candidatesOf(ctx, plan));

const affordableOf = (ctx: AppContext, planned: Planned<RoutedPlan>, plan: RoutedPlan, principal: Principal) =>
  oncePerHandshake(planned, `admit:${principal.keyId}`, async () => {
    const voiced = await candidatesFor(ctx, planned, plan);
    checkVoiceOwner(ctx.customVoices, principal.tenantId, plan.voice, voiced);
    return ctx.meter.admit(principal, voiced);
  });

/** What a surface adds to the checks before the upgrade. */
export interface UpgradeChecks<R> {
  /** A surface that lets keyless sockets wait (for a key in a frame) decides here; otherwise the session closes 4401/4403. */
  unauthenticated?: (err: ApiError) => R | undefined;
  /** The refusal a candidate's provider would give a new session now, when it is at capacity. */
  overloaded?: (candidate: Binding) => ProviderOverloaded | undefined;
}

/**
 * Before the upgrade, possibly twice: read-only. A 400 from the query (a voice no candidate takes
 * among them) is answered as HTTP; a known key whose account cannot pay is told too (402, or 422
 * for an unpriced model). Key and permission errors are left to the session, which closes with
 * 4401/4403 after the upgrade, unless the surface decides in `unauthenticated`. When every
 * candidate the account could pay for is at capacity (`overloaded`), 503 `provider_overloaded`.
 * `refuse` renders the answer in the surface's envelope; undefined lets the upgrade go ahead.
 */
export async function checkBeforeUpgrade<R>(
  ctx: AppContext,
  key: string | undefined,
  planned: Planned<RoutedPlan>,
  refuse: (err: ApiError) => R,
  checks: UpgradeChecks<R> = {},
): Promise<R | undefined> {
  if (!planned.plan && planned.error instanceof ApiError && planned.error.status === 400) return refuse(planned.error);
  const refusal = (err: unknown) => {
    if (err instanceof ApiError) return refuse(err);
    throw err;
  };
  const { plan } = planned;
  try {
    if (plan) await candidatesFor(ctx, planned, plan);
  } catch (err) {
    return refusal(err);
  }
  let principal: Principal;
  try {
    principal = await principalOf(ctx, planned, key);
  } catch (err) {
    return checks.unauthenticated?.(err instanceof ApiError ? err : new ApiError("invalid_api_key", "the API key could not be checked"));
  }
  if (!plan) return;
  let affordable: Binding[];
  try {
    affordable = await affordableOf(ctx, planned, plan, principal);
  } catch (err) {
    return refusal(err);
  }
  const refusals = affordable.map((candidate) => checks.overloaded?.(candidate));
  if (refusals.every(Boolean)) return refuse(sessionFailure(refusals.at(-1)));
}

/** The session's admission after the upgrade: the key, then the plan's own error, then billing; credits reserved while it connects. */
export function admitter(ctx: AppContext, key: string | undefined, id: string, planned: Planned<RoutedPlan>, surface: string): () => Promise<Admission> {
  return async () => {
    const principal = await principalOf(ctx, planned, key);
    if (!planned.plan) throw planned.error;
    const candidates = await affordableOf(ctx, planned, planned.plan, principal);
    const meter = ctx.meter.start(id, principal, surface);
    meter.prefetch(candidates[0]);
    return { candidates, meter };
  };
}
