import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { TtsProvider } from "../providers/types.ts";
import type { CustomVoices } from "../voices/custom-voices.ts";

/**
 * The routed candidates that take `voice`, in order. A provider that lists its voices (the embedded
 * engines) is left out when the voice is not one of them, as one that cannot produce the format is;
 * a provider that cannot list them stays, and its own answer decides (a list that cannot be had
 * counts as such). When no candidate is left, the voice is the client's mistake: 400
 * `invalid_request` with `param: "voice"`, before any upgrade, hold or provider call.
 */
export async function candidatesForVoice(candidates: Binding[], voice: string | undefined, provider: (id: string) => TtsProvider | undefined, clones?: CustomVoices): Promise<Binding[]> {
  if (!voice) return candidates;
  // A cloned voice lives at the one provider that made it.
  const clone = clones?.routeOf(voice);
  if (clone) {
    const held = candidates.filter((b) => b.provider.id === clone.provider);
    if (held.length) return held;
    throw notAVoiceOf(candidates, voice);
  }
  const names = await Promise.all(
    candidates.map((b) =>
      provider(b.provider.id)
        ?.voiceNames?.()
        .catch(() => undefined),
    ),
  );
  const kept = candidates.filter((_, i) => !names[i] || names[i].has(voice));
  if (kept.length) return kept;
  throw notAVoiceOf(candidates, voice);
}

function notAVoiceOf(candidates: Binding[], voice: string): ApiError {
  const providers = [...new Set(candidates.map((b) => b.provider.id))].join(", ");
  return new ApiError("invalid_request", `voice "${voice}" is not a voice of ${providers}`, { param: "voice" });
}

/**
 * A cloned voice is its owner's alone, and only once it is active: another tenant is told it is
 * no voice at all (as for an unknown one), the owner why it cannot be used yet. Other voices pass.
 */
export function checkVoiceOwner(clones: CustomVoices, tenantId: string, voice: string | undefined, candidates: Binding[]): void {
  const clone = voice ? clones.routeOf(voice) : undefined;
  if (!clone || !voice) return;
  if (clone.tenantId !== tenantId) throw notAVoiceOf(candidates, voice);
  if (clone.status !== "active")
    throw new ApiError("invalid_request", `the cloned voice ${voice} is ${clone.status}: GET /v1/custom-voices/${encodeURIComponent(voice)} tells when it can be used`, { param: "voice" });
}
