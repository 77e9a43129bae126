import type { Catalogue } from "../catalogue/catalogue.ts";
import type { CustomVoiceRow } from "./custom-voices.ts";

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

export function customVoiceView(catalogue: Catalogue, row: CustomVoiceRow) {
  const bindings = catalogue.bindings.filter((b) => b.capability === "tts" && b.provider.id === row.provider && (!row.model || row.model === b.canonical));
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
