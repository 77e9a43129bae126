import type { Principal } from "../accounts/keys.ts";
import type { Binding } from "../catalogue/types.ts";
import type { AppContext } from "../context.ts";
import { ApiError, sessionFailure, type ProviderOverloaded } from "../errors.ts";
import type { Payer } from "../ledger/meter-types.ts";
import { SESSION_OPEN } from "../limits/counters.ts";
import type { Lease } from "../limits/limiter.ts";
import { planVoice, type Voiced } from "../planning/plan-voice.ts";
import type { Candidate } from "../routing/candidate.ts";
import { type Admission, meteredSession } from "../sessions/admission.ts";
import { inSpan, type TraceSpan } from "../tracing/spans.ts";
import { currentRequest } from "../request-context.ts";

// One admission for every WebSocket (`/v1/tts`, `/v1/stt`, `/el` stream-input, and the realtime
// sockets of the three surfaces): credential → plan → funds, once per handshake. A socket route
// runs it as its handshake's `admit` (socket-routes.ts), whose answer becomes the upgrade's data
// (`ws.data`), so `open` takes it from there.
//
// What can be answered as HTTP is thrown, and the handshake answers it in the path's envelope: a plan's 400 (a voice no candidate takes among them), a known payer who cannot pay
// (402, or 422 for an unpriced model), every candidate at capacity or known to be down (503). A refused credential
// waits for the upgrade, to be told as a close (4401/4403), unless the surface lets the socket
// wait for a key in a frame.

/** What a socket's handshake claims, step by step. */
export interface SocketClaim<P, C extends Payer> {
  /** Who pays: a key's owner, or a redeemed secret's. Its `ApiError` is told after the upgrade. */
  credential: () => Promise<C>;
  /** What the socket runs, from its request (and, for a profile, from the payer's own); undefined when it runs nothing planned here. */
  plan: (payer: C | undefined) => P | undefined | Promise<P | undefined>;
  /** The plan's candidate lists, each of which the payer must be able to pay for. */
  wants: (plan: P) => Voiced[];
  /** Which planning errors wait for the upgrade, told as a close like the credential's; the others are answered before it. */
  closesAfterUpgrade?: (err: unknown) => boolean;
  /** The refusal a candidate's provider would give a new session now, when it is at capacity. */
  overloaded?: (candidate: Binding) => ProviderOverloaded | undefined;
}

/** Who pays, or why the credential was refused (told after the upgrade). */
type Credited<C> = { payer: C; credentialError?: undefined } | { payer?: undefined; credentialError: ApiError };

/** What a handshake settled, carried through the upgrade to the socket's sessions. */
export type SocketAdmission<P, C extends Payer = Principal> = Credited<C> & {
  plan?: P;
  /** Why planning failed, when that waits for the upgrade. */
  planError?: unknown;
  /** The plan's candidate lists (`wants`), each narrowed to the candidates that take its voice. */
  voiced: Voiced[];
  /** Of each voiced list, the candidates the payer can pay for; empty without a payer or a plan. */
  affordable: Candidate[][];
  /** The socket counted against its tenant's and key's `max_sessions`: released when it closes (ws-connections.ts). */
  lease?: Lease;
  /** The socket closed (ws-connections.ts): a lease taken after that (a late key's) is released at once. */
  closed?: boolean;
  /** The handshake's root span (tracing on): ended by the socket's session, or when it closes without one (WsConnections). */
  span?: TraceSpan;
};

/** A lease whose socket did not open within this long (its upgrade failed) is released. */
const UPGRADE_GRACE_MS = 10_000;

/** Credential, limits, plan, then funds: throws what is answered before the upgrade, keeps what is told after it. */
export function admitSocket<P, C extends Payer>(ctx: AppContext, claim: SocketClaim<P, C>): Promise<SocketAdmission<P, C>> {
  return inSpan(
    "handshake.admission",
    () => admitHandshake(ctx, claim),
    (admitted) => ({ "voxroute.candidates": admitted.affordable.map((list) => list.length).join(","), "error.type": admitted.credentialError?.code }),
  );
}

async function admitHandshake<P, C extends Payer>(ctx: AppContext, claim: SocketClaim<P, C>): Promise<SocketAdmission<P, C>> {
  const credited = await creditOf(claim.credential);
  const lease = credited.payer ? await ctx.limits.admit(credited.payer, SESSION_OPEN) : undefined;
  try {
    const admitted = await planAndFund(ctx, claim, credited);
    lease?.releaseUnlessOpened(UPGRADE_GRACE_MS);
    return { ...admitted, lease, span: currentRequest()?.span };
  } catch (err) {
    lease?.release();
    throw err;
  }
}

async function planAndFund<P, C extends Payer>(ctx: AppContext, claim: SocketClaim<P, C>, credited: Credited<C>): Promise<SocketAdmission<P, C>> {
  let plan: P | undefined;
  let planError: unknown;
  try {
    plan = await claim.plan(credited.payer);
  } catch (err) {
    if (!claim.closesAfterUpgrade?.(err)) throw err;
    planError = err;
  }
  const voiced = await voicedFor(ctx, plan ? claim.wants(plan) : [], credited.payer?.tenantId);
  const affordable = credited.payer && plan ? await fund(ctx, credited.payer, voiced) : [];
  if (claim.overloaded) checkCapacity(affordable, claim.overloaded);
  checkHealth(ctx, affordable);
  return { ...credited, plan, planError, voiced, affordable };
}

/** 503 `provider_overloaded` when every candidate a list leaves the payer is at capacity. */
function checkCapacity(affordable: Candidate[][], overloaded: (candidate: Binding) => ProviderOverloaded | undefined): void {
  for (const candidates of affordable) {
    const refusals = candidates.map((candidate) => overloaded(candidate));
    if (refusals.every(Boolean)) throw sessionFailure(refusals.at(-1));
  }
}

/** 503 `provider_unavailable` when every candidate a list leaves the payer is known to be down (docs/routing.md#provider-health). */
function checkHealth(ctx: AppContext, affordable: Binding[][]): void {
  for (const candidates of affordable) {
    if (candidates.length > 0 && !candidates.some((candidate) => ctx.health.usable(candidate))) throw ctx.health.unavailable(candidates);
  }
}

async function creditOf<C>(credential: () => Promise<C>): Promise<Credited<C>> {
  try {
    return { payer: await credential() };
  } catch (err) {
    if (err instanceof ApiError) return { credentialError: err };
    throw err;
  }
}

/** Each list narrowed to the candidates that take its voice (the planner's voice step), for the payer when known. */
async function voicedFor(ctx: AppContext, wanted: Voiced[], tenantId: string | undefined): Promise<Voiced[]> {
  const voiced: Voiced[] = [];
  for (const list of wanted) voiced.push(await planVoice(list, tenantId, ctx));
  return voiced;
}

/** Of each list, what the payer can pay for. */
async function fund(ctx: AppContext, payer: Payer, voiced: Voiced[]): Promise<Candidate[][]> {
  const affordable: Candidate[][] = [];
  for (const { candidates } of voiced) affordable.push(await ctx.meter.admit(payer, candidates));
  return affordable;
}

/** A query's 400 is answered before the upgrade; its other errors (an unknown model, excluded providers) close the socket after it. */
const notBadRequest = (err: unknown) => !(err instanceof ApiError && err.status === 400);

/** A channel keyed in its handshake and planned from its query: one list of candidates (`/v1/tts`, `/v1/stt`, `/el` stream-input). */
export function admitChannel<P extends Voiced>(
  ctx: AppContext,
  key: string | undefined,
  plan: () => P,
  overloaded?: (candidate: Binding) => ProviderOverloaded | undefined,
): Promise<SocketAdmission<P>> {
  return admitSocket(ctx, { credential: () => ctx.keys.authenticate(key), plan, wants: (p) => [p], closesAfterUpgrade: notBadRequest, overloaded });
}

/** A channel whose handshake carried no key, once one comes in a frame (`/el` stream-input's init frame): that key's owner pays for the handshake's plan. */
export async function withLateKey<P>(ctx: AppContext, admission: SocketAdmission<P>, key: string | undefined): Promise<SocketAdmission<P>> {
  const payer = await ctx.keys.authenticate(key);
  // Kept on the handshake's admission, which the socket's close releases; a socket gone while it was taken has nothing left to release it.
  const lease = await ctx.limits.admit(payer, SESSION_OPEN);
  if (admission.closed) lease?.release();
  else admission.lease = lease;
  // The voice's owner, which the handshake could not know, is judged now.
  const voiced = await voicedFor(ctx, admission.voiced, payer.tenantId);
  return { ...admission, payer, credentialError: undefined, voiced, affordable: admission.plan ? await fund(ctx, payer, voiced) : [] };
}

/**
 * The admission of a channel's session, after the upgrade: the handshake's refusal (the
 * credential's, then the plan's), else its own meter on the payer with credits reserved while it connects.
 */
export async function channelSession(ctx: AppContext, id: string, admission: SocketAdmission<unknown>, surface: string): Promise<Admission> {
  if (admission.credentialError) throw admission.credentialError;
  if (!admission.plan) throw admission.planError;
  return meteredSession(ctx.meter, id, admission.payer, admission.affordable[0]!, surface);
}
