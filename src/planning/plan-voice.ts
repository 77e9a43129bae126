import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { TtsProvider } from "../providers/types.ts";
import type { ClonedVoiceRoute } from "../voices/custom-voices.ts";

/** What a voice is judged against: the providers' own lists (where they keep one) and the cloned voices (the `AppContext` is one). */
export interface VoiceLists {
  providers: { get(id: string): TtsProvider | undefined };
  customVoices: { routeOf(voice: string): ClonedVoiceRoute | undefined };
}

/** A plan's candidates, and the voice they must take. */
export interface Voiced {
  candidates: Binding[];
  voice?: string;
}

/**
 * The planning step that judges a plan's voice, the one every surface runs (HTTP speech, each
 * socket's admission, a conversation's voice): the plan with only the candidates that take it,
 * in order. Async, as it reads the providers' lists.
 *
 * - A cloned voice lives at the one provider that made it, and is its owner's alone once active:
 *   another tenant is told it is no voice at all, the owner why it cannot be used yet.
 * - A provider that lists its voices (the embedded engines) is left out when the voice is not one
 *   of them, as one that cannot produce the format is; a provider that cannot list them stays,
 *   and its own answer decides (a list that cannot be had counts as such).
 *
 * No candidate left is the client's mistake: 400 `invalid_request`, `param: "voice"`, before any
 * upgrade, hold or provider call. `tenantId` is undefined while the payer is not known (a key
 * that comes in a frame): the owner is then judged when it is, by the same call with the tenant.
 */
export async function planVoice<P extends Voiced>(plan: P, tenantId: string | undefined, lists: VoiceLists): Promise<P> {
  const { candidates, voice } = plan;
  if (!voice) return plan;
  const clone = lists.customVoices.routeOf(voice);
  if (clone) return { ...plan, candidates: ownersCandidates(candidates, voice, clone, tenantId) };
  const names = await Promise.all(
    candidates.map((b) =>
      lists.providers
        .get(b.provider.id)
        ?.voiceNames?.()
        .catch(() => undefined),
    ),
  );
  const kept = candidates.filter((_, i) => !names[i] || names[i].has(voice));
  if (kept.length === 0) throw notAVoiceOf(candidates, voice);
  return { ...plan, candidates: kept };
}

/** The candidates of a cloned voice's provider, when the tenant (if known) may use it. */
function ownersCandidates(candidates: Binding[], voice: string, clone: ClonedVoiceRoute, tenantId: string | undefined): Binding[] {
  const held = candidates.filter((b) => b.provider.id === clone.provider);
  if (held.length === 0) throw notAVoiceOf(candidates, voice);
  if (tenantId === undefined) return held;
  if (clone.tenantId !== tenantId) throw notAVoiceOf(held, voice);
  if (clone.status !== "active") {
    throw new ApiError("invalid_request", `the cloned voice ${voice} is ${clone.status}: GET /v1/custom-voices/${encodeURIComponent(voice)} tells when it can be used`, { param: "voice" });
  }
  return held;
}

function notAVoiceOf(candidates: Binding[], voice: string): ApiError {
  const providers = [...new Set(candidates.map((b) => b.provider.id))].join(", ");
  return new ApiError("invalid_request", `voice "${voice}" is not a voice of ${providers}`, { param: "voice" });
}
