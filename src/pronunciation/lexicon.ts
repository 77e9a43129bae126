import type { PhonemeSupport as ProviderPhonemes } from "../providers/types.ts";
import { ApiError } from "../errors.ts";
import { escapeXml } from "./pls.ts";
import type { Rule } from "./rules.ts";

// Dictionaries compiled for one request (docs/pronunciation.md): the text a provider is given is
// the caller's with every rule applied, each part of it knowing the caller's text it stands for
// (billing and timings are the caller's). Rules apply in order, dictionaries in the order named;
// text a rule replaced is not matched again.

/** What a provider takes of phoneme rules (`TtsProvider.phonemes`); none when undefined. */
export type PhonemeSupport = ProviderPhonemes | undefined;

/** A dictionary version as a request uses it. */
export interface DictionaryVersion {
  id: string;
  versionId: string;
  rules: Rule[];
}

/** A part of the text given to the provider: `said` stands for the caller's `written` (the same text where no rule matched). */
export interface Piece {
  written: string;
  said: string;
}

interface Compiled {
  rule: Rule;
  /** The rule's place in the request: its dictionary's and its own. */
  index: string;
  pattern: RegExp;
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function patternOf(rule: Rule): RegExp {
  const body = literal(rule.string_to_replace);
  const word = rule.word_boundaries ? `(?<![\\p{L}\\p{N}_])${body}(?![\\p{L}\\p{N}_])` : body;
  return new RegExp(word, rule.case_sensitive ? "gu" : "giu");
}

export class Lexicon {
  private readonly compiled: Compiled[];
  /** Stable for the same dictionary versions in the same order: the TTS cache keys on it. */
  readonly version: string;

  constructor(readonly dictionaries: DictionaryVersion[]) {
    this.compiled = dictionaries.flatMap((d, di) => d.rules.map((rule, ri) => ({ rule, index: dictionaries.length > 1 ? `${di}.${ri}` : String(ri), pattern: patternOf(rule) })));
    this.version = dictionaries.map((d) => `${d.id}@${d.versionId}`).join(",");
  }

  get hasPhonemes(): boolean {
    return this.compiled.some((c) => c.rule.type === "phoneme");
  }

  get empty(): boolean {
    return this.compiled.length === 0;
  }

  /**
   * Refuses a provider that cannot say a phoneme rule: one without phonemes, the rule without an
   * alias (400 naming the rule's index and the provider; never ignored).
   */
  check(provider: string, phonemes: PhonemeSupport): void {
    if (phonemes) return;
    const bare = this.compiled.find((c) => c.rule.type === "phoneme" && !c.rule.alias);
    if (bare) {
      throw new ApiError("invalid_request", `pronunciation rule ${bare.index} ("${bare.rule.string_to_replace}") is a phoneme rule without an alias, and provider ${provider} takes no phonemes`, {
        param: "pronunciation_dictionaries",
        rule_index: bare.index,
        provider,
      });
    }
  }

  /** `text` as the provider is to be given it, in pieces. */
  pieces(text: string, phonemes: PhonemeSupport): Piece[] {
    let pieces: (Piece & { done: boolean })[] = [{ written: text, said: text, done: false }];
    for (const { rule, pattern } of this.compiled) {
      pieces = pieces.flatMap((piece) => (piece.done ? [piece] : split(piece.written, pattern, (m) => said(rule, m, phonemes))));
    }
    return pieces.map(({ written, said }) => ({ written, said }));
  }

  apply(text: string, phonemes: PhonemeSupport): string {
    return this.empty
      ? text
      : this.pieces(text, phonemes)
          .map((p) => p.said)
          .join("");
  }
}

function said(rule: Rule, match: string, phonemes: PhonemeSupport): string {
  if (rule.type === "alias") return rule.alias;
  if (phonemes === "ssml") return `<phoneme alphabet="${escapeXml(rule.alphabet)}" ph="${escapeXml(rule.phoneme)}">${escapeXml(match)}</phoneme>`;
  return rule.alias ?? match; // `check` refused a phoneme rule without an alias
}

function split(text: string, pattern: RegExp, say: (match: string) => string): (Piece & { done: boolean })[] {
  const out: (Piece & { done: boolean })[] = [];
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) out.push({ written: text.slice(at, m.index), said: text.slice(at, m.index), done: false });
    out.push({ written: m[0], said: say(m[0]), done: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ written: text.slice(at), said: text.slice(at), done: false });
  return out;
}
