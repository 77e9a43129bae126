import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { TtsProvider } from "../providers/types.ts";

/**
 * The routed candidates that take `voice`, in order. A provider that lists its voices (the embedded
 * engines) is left out when the voice is not one of them, as one that cannot produce the format is;
 * a provider that cannot list them stays, and its own answer decides (a list that cannot be had
 * counts as such). When no candidate is left, the voice is the client's mistake: 400
 * `invalid_request` with `param: "voice"`, before any upgrade, hold or provider call.
 */
export async function candidatesForVoice(candidates: Binding[], voice: string | undefined, provider: (id: string) => TtsProvider | undefined): Promise<Binding[]> {
  if (!voice) return candidates;
  const names = await Promise.all(
    candidates.map((b) =>
      provider(b.provider.id)
        ?.voiceNames?.()
        .catch(() => undefined),
    ),
  );
  const kept = candidates.filter((_, i) => !names[i] || names[i].has(voice));
  if (kept.length) return kept;
  const providers = [...new Set(candidates.map((b) => b.provider.id))].join(", ");
  throw new ApiError("invalid_request", `voice "${voice}" is not a voice of ${providers}`, { param: "voice" });
}
