import type { Binding } from "../catalogue/types.ts";
import type { Voice } from "../providers/types.ts";
import { breath } from "../util/breath.ts";
import { entryOfVoice, mergeOffers, type VoiceEntry } from "./voice-entry.ts";
import type { VoiceMetrics } from "./voice-metrics.ts";
import { previewPath, type VoicePreviews } from "./voice-previews.ts";
import type { VoiceSightings } from "./voice-sightings.ts";

/** Entries made between two breaths of the event loop while the catalogue is rebuilt. */
const ENTRIES_PER_BREATH = 500;

/** What an entry is made with besides its provider's voice: figures, sightings, previews, and the voices left out. */
export interface EntrySources {
  metrics: VoiceMetrics;
  sightings: VoiceSightings;
  previews: VoicePreviews;
  hidden: (voiceId: string) => boolean;
}

/**
 * The entries of every provider's list, one per model and voice id, its providers in `bindings`'
 * (catalogue) order (the first is the default route); made a chunk at a time between breaths of
 * the event loop. `at` stands for the sightings of a voice never seen before.
 */
export async function entriesOfLists(lists: ReadonlyMap<string, Voice[]>, bindings: readonly Binding[], sources: EntrySources, at: Date): Promise<VoiceEntry[]> {
  const { metrics, sightings, previews, hidden } = sources;
  const groups = new Map<string, VoiceEntry[]>();
  let made = 0;
  for (const binding of bindings) {
    for (const voice of lists.get(binding.provider.id) ?? []) {
      if (++made % ENTRIES_PER_BREATH === 0) await breath();
      if (hidden(voice.id)) continue;
      const key = `${binding.canonical}\u0000${voice.id}`;
      const group = groups.get(key);
      const seen = sightings.of({ provider: binding.provider.id, model: binding.canonical, voice: voice.id });
      const entry = entryOfVoice(voice, binding, {
        firstSeenAt: seen?.firstSeenAt ?? at,
        lastSeenAt: seen?.lastSeenAt ?? at,
        metrics: metrics.of(binding.provider.id, binding.canonical, voice.id),
        default: !group,
        ...(previews.serves(binding) ? { previewUrl: previewPath(binding.canonical, voice.id) } : {}),
        ...(voice.sourceUrls ? { sourceUrls: voice.sourceUrls } : {}),
      });
      if (group) group.push(entry);
      else groups.set(key, [entry]);
    }
  }
  return [...groups.values()].map(mergeOffers);
}
