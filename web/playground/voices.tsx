import { useEffect, useState } from "preact/hooks";
import { api, describeFailure, queryOf } from "../api.ts";
import type { Facet, Speaker, VoiceEntry, VoicePage } from "./catalogue.ts";

/** Facets with a query parameter of their own; the others are `filter=facet:value`. */
const OWN_PARAMETER = new Set(["model", "provider", "language", "category"]);
const VALUES_SHOWN = 8;

type Selected = Record<string, string[]>;

function voiceQuery(q: string, selected: Selected, cursor?: string): string {
  const params: Record<string, string | string[] | undefined> = { q: q.trim() || undefined, include_facets: "true", limit: "12", cursor, filter: [] };
  for (const [facet, values] of Object.entries(selected)) {
    if (OWN_PARAMETER.has(facet)) params[facet] = values;
    else (params.filter as string[]).push(...values.map((v) => `${facet}:${v}`));
  }
  return `/v1/voices${queryOf(params)}`;
}

/** One preview at a time: a new one stops the one playing. */
const preview = new Audio();
function playPreview(url: string): void {
  preview.src = url;
  void preview.play();
}

function Voice({ entry, onUse }: { entry: VoiceEntry; onUse: (s: Speaker) => void }) {
  const { voice, model, providers } = entry;
  const provider = providers[0];
  return (
    <li class="voice">
      <h3>{voice.name}</h3>
      <p class="muted">
        {model.name} · <code>{voice.id}</code> · {voice.languages.map((l) => l.locale ?? l.name).join(", ")}
      </p>
      <p>{voice.description}</p>
      <div class="row">
        {voice.preview_url ? (
          <button type="button" class="secondary" aria-label={`Play a preview of ${voice.name}`} onClick={() => playPreview(voice.preview_url!)}>
            ▶ Preview
          </button>
        ) : (
          <span class="muted">No preview</span>
        )}
        {provider && (
          <button type="button" class="secondary" aria-label={`Use ${voice.name} in text to speech`} onClick={() => onUse({ provider: provider.id, model: model.id, voice: voice.id })}>
            Use in TTS
          </button>
        )}
      </div>
    </li>
  );
}

/** `/v1/voices` with search, facets (checkboxes) and pages; each voice's preview, and a button that puts it into the TTS form. */
export function VoiceBrowser({ onUse }: { onUse: (s: Speaker) => void }) {
  const [q, setQ] = useState("");
  const [query, setQuery] = useState("");
  const [selected, setSelected] = useState<Selected>({});
  const [voices, setVoices] = useState<VoiceEntry[]>([]);
  const [page, setPage] = useState<VoicePage>();
  const [error, setError] = useState("");

  const load = async (cursor?: string) => {
    try {
      const next = await api<VoicePage>(voiceQuery(query, selected, cursor));
      setPage(next);
      setVoices(cursor ? [...voices, ...next.voices] : next.voices);
      setError("");
    } catch (err) {
      setError(describeFailure(err));
    }
  };
  // A new search or selection starts from the first page.
  useEffect(() => void load(), [query, selected]);

  const toggle = (facet: string, value: string) => {
    const values = selected[facet] ?? [];
    setSelected({ ...selected, [facet]: values.includes(value) ? values.filter((v) => v !== value) : [...values, value] });
  };
  const shown = (f: Facet) => f.values.filter((v, i) => i < VALUES_SHOWN || selected[f.id]?.includes(v.id));

  return (
    <div class="voices">
      <form
        class="row"
        aria-label="Search voices"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(q);
        }}
      >
        <label for="voice-q" class="sr-only">
          Search voices
        </label>
        <input id="voice-q" type="search" placeholder="Search: scottish, female german, …" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">Search</button>
      </form>
      <p class="error" role="alert">
        {error}
      </p>
      <div class="voice-browser">
        <div class="facets">
          {page?.facets?.map((f) => (
            <fieldset>
              <legend>{f.name}</legend>
              {shown(f).map((v) => (
                <label class="check">
                  <input type="checkbox" checked={selected[f.id]?.includes(v.id) ?? false} onChange={() => toggle(f.id, v.id)} /> {v.name} <span class="muted">({v.count})</span>
                </label>
              ))}
            </fieldset>
          ))}
        </div>
        <div>
          <p aria-live="polite" data-testid="voice-count">
            {page ? `${page.total_count} ${page.total_count === 1 ? "voice" : "voices"}` : "…"}
          </p>
          <ul class="voice-list">
            {voices.map((entry) => (
              <Voice entry={entry} onUse={onUse} />
            ))}
          </ul>
          {page?.next_cursor && (
            <button type="button" class="secondary" onClick={() => load(page.next_cursor!)}>
              Show more voices
            </button>
          )}
        </div>
      </div>
    </div>
  );
}
