import type { VoiceEntry } from "./voice-entry.ts";

// How voices are found by text: the words of an entry and of a query, and the sorted postings of
// each word that a query's words are looked up in as prefixes.

/** Lower-case words without diacritics: how entries and queries are cut into tokens. */
export function tokens(text: string): string[] {
  // Most metadata is printable ASCII, which has no diacritics to take off and splits on a simpler pattern.
  if (/^[ -~]*$/.test(text))
    return text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** A sorted token list with each token's postings (item numbers, ascending). */
export class TokenPostings {
  readonly tokens: string[];
  readonly postings: Uint32Array[];

  constructor(byToken: Map<string, number[]>) {
    this.tokens = [...byToken.keys()].sort();
    this.postings = this.tokens.map((t) => Uint32Array.from(byToken.get(t)!));
  }

  /** Calls `visit` with the postings of every token that starts with `prefix`, and whether it is the whole token. */
  forPrefix(prefix: string, visit: (postings: Uint32Array, exact: boolean) => void): void {
    let lo = 0;
    let hi = this.tokens.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tokens[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.tokens.length && this.tokens[i].startsWith(prefix); i++) visit(this.postings[i], this.tokens[i] === prefix);
  }
}

/** What a text query is matched against: names, description, ids, model, providers, languages, category and labels. */
export function searchText(e: VoiceEntry): string {
  const v = e.voice;
  return [
    v.name,
    v.description,
    v.id,
    e.model.id,
    e.model.name,
    ...e.providers.flatMap((p) => [p.id, p.name]),
    ...v.languages.flatMap((l) => [l.id, l.name, l.locale ?? "", l.accent ?? ""]),
    v.category.name,
    ...v.labels.map((l) => l.value.name),
  ].join(" ");
}
