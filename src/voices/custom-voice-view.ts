import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding } from "../catalogue/types.ts";
import type { CustomVoiceRow } from "./custom-voices.ts";
import { entryOfVoice, type VoiceEntry } from "./voice-entry.ts";

// The interface's cloned voice object (`/v1/custom-voices/{voice_id}`): the voice once per speech
// model it can be used with (the model it was cloned for, or every TTS model of its provider),
// each with the provider that holds it.

const languageNames = new Intl.DisplayNames(["en"], { type: "language" });

function languageOf(tag: string) {
  const [base, region] = tag.split(/[-_]/);
  let name = tag;
  try {
    name = languageNames.of(base!) ?? tag;
  } catch {} // not a language tag Intl knows: its own spelling is its name
  return { id: base!.toLowerCase(), name, locale: region ? `${base!.toLowerCase()}-${region.toUpperCase()}` : null, accent: null };
}

/** The speech models a cloned voice can be used with: the one it was cloned for, or every TTS model of its provider. */
function bindingsOf(catalogue: Catalogue, row: CustomVoiceRow): Binding[] {
  return catalogue.bindings.filter((b) => b.capability === "tts" && b.provider.id === row.provider && (!row.model || row.model === b.canonical));
}

/** The tenant's cloned voices as catalogue entries (`GET /v1/voices` with its key): the active ones, once per model. */
export function ownVoiceEntries(catalogue: Catalogue, rows: readonly CustomVoiceRow[]): VoiceEntry[] {
  return rows
    .filter((row) => row.status === "active")
    .flatMap((row) =>
      bindingsOf(catalogue, row).map((b) =>
        entryOfVoice({ id: row.id, name: row.name, languages: row.language ? [row.language] : [], ...(row.description ? { description: row.description } : {}) }, b, {
          scope: "organization",
          category: "cloned",
          previewUrl: null,
          firstSeenAt: row.createdAt,
          lastSeenAt: row.updatedAt,
        }),
      ),
    );
}

export function customVoiceView(catalogue: Catalogue, row: CustomVoiceRow) {
  const bindings = bindingsOf(catalogue, row);
  const voices = bindings.map((b) => ({
    model: { id: b.model.canonical, name: b.model.name },
    voice: {
      id: row.id,
      name: row.name,
      description: row.description,
      category: { id: "cloned", name: "Cloned" },
      languages: row.language ? [languageOf(row.language)] : [],
      scope: { type: "organization" },
      status: row.status,
      fee_credits: row.feeCredits,
      first_seen_at: row.createdAt.toISOString(),
      last_seen_at: row.updatedAt.toISOString(),
    },
    providers: [{ id: b.provider.id, name: b.provider.name, provider_model_id: b.id, status: row.status, failure_reason: row.failureReason }],
  }));
  return { id: row.id, voices, total_count: voices.length, has_more: false, next_cursor: null };
}
