import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { TtsProvider } from "../providers/types.ts";
import { byLink, type Candidate, linkMember, voiceOf } from "../routing/candidate.ts";
import type { ClonedVoiceRoute } from "../voices/custom-voices.ts";

/** What a voice is judged against: the providers' own lists (where they keep one) and the cloned voices (the `AppContext` is one). */
export interface VoiceLists {
  providers: { get(id: string): TtsProvider | undefined };
  customVoices: { routeOf(voice: string): ClonedVoiceRoute | undefined };
}

/** A plan's candidates, and the voice of its primary model (a fallback model's candidates carry their own). */
export interface Voiced {
  candidates: Candidate[];
  voice?: string;
}

/**
 * The planning step that judges a plan's voices, the one every surface runs (HTTP speech, each
 * socket's admission, a conversation's voice): the plan with only the candidates that take their
 * voice, in order. Async, as it reads the providers' lists. Each model of a fallback chain is
 * judged with its own voice, as the primary is with the plan's.
 *
 * - A cloned voice lives at the one provider that made it, and is its owner's alone once active:
 *   another tenant is told it is no voice at all, the owner why it cannot be used yet.
 * - A provider that lists its voices (the embedded engines) is left out when the voice is not one
 *   of them, as one that cannot produce the format is; a provider that cannot list them stays,
 *   and its own answer decides (a list that cannot be had counts as such).
 *
 * No candidate of a model left is the client's mistake: 400 `invalid_request`, `param: "voice"`
 * (`fallbacks[i].voice` for a fallback's), before any upgrade, hold or provider call. `tenantId`
 * is undefined while the payer is not known (a key that comes in a frame): the owner is then
 * judged when it is, by the same call with the tenant.
 */
export async function planVoice<P extends Voiced>(plan: P, tenantId: string | undefined, lists: VoiceLists): Promise<P> {
  // Most sessions name a voice no candidate's provider lists and no clone is: every candidate stays, no list is read.
  if (plan.candidates.every((c) => takesAnyVoice(c, voiceOf(c, plan.voice), lists))) return { ...plan, candidates: [...plan.candidates] };
  const links = byLink(plan.candidates);
  const kept = await Promise.all(links.map((link) => byVoice(link, plan.voice, tenantId, lists)));
  return { ...plan, candidates: kept.flat() };
}

/** Whether the candidate is kept whatever `voice` is: none named, or one neither its provider's list nor a clone judges. */
const takesAnyVoice = (c: Candidate, voice: string | undefined, lists: VoiceLists) => !voice || (!lists.providers.get(c.provider.id)?.voiceNames && !lists.customVoices.routeOf(voice));

/**
 * One model's candidates that take their voice, in order. A model's name may reach models whose
 * operator voice aliases differ: each voice is judged on its own candidates, and the link is
 * refused (as its first voice's) only when none is left.
 */
async function byVoice(link: Candidate[], primary: string | undefined, tenantId: string | undefined, lists: VoiceLists): Promise<Candidate[]> {
  const groups = new Map<string | undefined, Candidate[]>();
  for (const c of link) {
    const voice = voiceOf(c, primary);
    groups.set(voice, [...(groups.get(voice) ?? []), c]);
  }
  const member = linkMember(link[0].fallback, "voice");
  const judged = await Promise.allSettled([...groups].map(([voice, candidates]) => voicedLink(candidates, voice, member, tenantId, lists)));
  const kept = new Set(judged.flatMap((j) => (j.status === "fulfilled" ? j.value : [])));
  const refused = judged.find((j) => j.status === "rejected");
  if (kept.size === 0 && refused) throw refused.reason;
  return link.filter((c) => kept.has(c));
}

/** One model's candidates that take its voice; `member` names that voice in a refusal. */
async function voicedLink(candidates: Candidate[], voice: string | undefined, member: string, tenantId: string | undefined, lists: VoiceLists): Promise<Candidate[]> {
  if (!voice) return candidates;
  const clone = lists.customVoices.routeOf(voice);
  if (clone) return ownersCandidates(candidates, voice, member, clone, tenantId);
  const names = await Promise.all(
    candidates.map((b) =>
      lists.providers
        .get(b.provider.id)
        ?.voiceNames?.()
        .catch(() => undefined),
    ),
  );
  const kept = candidates.filter((_, i) => !names[i] || names[i].has(voice));
  if (kept.length === 0) throw notAVoiceOf(candidates, voice, member);
  return kept;
}

/** The candidates of a cloned voice's provider, when the tenant (if known) may use it. */
function ownersCandidates(candidates: Candidate[], voice: string, member: string, clone: ClonedVoiceRoute, tenantId: string | undefined): Candidate[] {
  const held = candidates.filter((b) => b.provider.id === clone.provider);
  if (held.length === 0) throw notAVoiceOf(candidates, voice, member);
  if (tenantId === undefined) return held;
  if (clone.tenantId !== tenantId) throw notAVoiceOf(held, voice, member);
  if (clone.status !== "active") {
    throw new ApiError(
      "invalid_request",
      `${member === "voice" ? "" : `${member}: `}the cloned voice ${voice} is ${clone.status}: GET /v1/custom-voices/${encodeURIComponent(voice)} tells when it can be used`,
      { param: member },
    );
  }
  return held;
}

function notAVoiceOf(candidates: Binding[], voice: string, member: string): ApiError {
  const providers = [...new Set(candidates.map((b) => b.provider.id))].join(", ");
  return new ApiError("invalid_request", `${member} "${voice}" is not a voice of ${providers}`, { param: member });
}
