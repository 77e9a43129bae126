import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";

/** A model the request falls back to when its own providers cannot serve, with the voice it speaks in (TTS). */
export interface ModelChoice {
  model: string;
  voice?: string;
}

/** The most fallback models a request may name. */
export const MAX_FALLBACKS = 5;

/**
 * A binding as a request's chain routes it: the voice it speaks in and, for a fallback model's
 * binding, the fallback's index (`fallbacks[i]`). The primary model's bindings have no index.
 */
export type Candidate = Binding & { voice?: string; fallback?: number };

/**
 * The voice a candidate is opened with: a fallback model's own, else the request's (`primary`),
 * as the operator's voice alias on its model says (docs/catalogue.md#operator-aliases).
 */
export function voiceOf(candidate: Candidate, primary: string | undefined): string | undefined {
  const named = candidate.fallback === undefined ? primary : candidate.voice;
  return (named !== undefined && candidate.model.voiceAliases?.get(named)) || named;
}

/** The request member naming a link of the chain: `voice` / `model` for the primary, `fallbacks[i].voice` for a fallback. */
export function linkMember(fallback: number | undefined, member: "model" | "voice"): string {
  return fallback === undefined ? member : `fallbacks[${fallback}].${member}`;
}

/** The model a candidate's link names, as the request named it. */
export function linkModel(candidate: Candidate, req: { model?: string; fallbacks?: ModelChoice[] }): string | undefined {
  return candidate.fallback === undefined ? req.model : req.fallbacks?.[candidate.fallback]?.model;
}

/**
 * Runs a step of a fallback's routing or planning: its refusal names the fallback (its voice for a
 * voice refusal, else its model), prefixed to the reason. `i` undefined: the primary, left as it is.
 */
export function inLink<T>(i: number | undefined, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (i === undefined || !(err instanceof ApiError)) throw err;
    const member = linkMember(i, err.code === "voice_required" || err.extra.param === "voice" ? "voice" : "model");
    if (err.extra.param === member) throw err;
    throw new ApiError(err.code, `${member}: ${err.message}`, { ...err.extra, param: member }, err.status);
  }
}

/** A chain's candidates by the link they belong to, in the chain's order (the primary's first). */
export function byLink<C extends Candidate>(candidates: C[]): C[][] {
  const links = new Map<number | undefined, C[]>();
  for (const c of candidates) links.set(c.fallback, [...(links.get(c.fallback) ?? []), c]);
  return [...links.values()];
}

/** What keys an STT plan's families: a provider may serve several models of a chain, each of its own family. */
export function familyKey(provider: string, canonical: string): string {
  return `${provider}\u0000${canonical}`;
}
