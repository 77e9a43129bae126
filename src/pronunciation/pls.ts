import { ApiError } from "../errors.ts";
import { MAX_RULES, type Rule } from "./rules.ts";

// W3C Pronunciation Lexicon Specification 1.0 (https://www.w3.org/TR/pronunciation-lexicon/), the
// file ElevenLabs' `add-from-file` takes and `download` gives: each `<lexeme>`'s graphemes become
// rules, said by its first `<phoneme>` (its `alphabet`, else the lexicon's) or its first `<alias>`.
// A lexeme with both is a phoneme rule whose alias is said by providers that take no phonemes.

const unxml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&amp;/g, "&");
export const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const attribute = (tag: string, name: string) =>
  new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)
    .exec(tag)
    ?.slice(1)
    .find((v) => v !== undefined);
const elements = (body: string, name: string) => [...body.matchAll(new RegExp(`<${name}(\\s[^>]*)?>([\\s\\S]*?)</${name}>`, "g"))].map((m) => ({ attrs: m[1] ?? "", text: unxml(m[2]!.trim()) }));

export function rulesOfPls(file: string): Rule[] {
  const root = /<lexicon(\s[^>]*)?>/.exec(file);
  if (!root) throw new ApiError("invalid_request", "the file is not a PLS lexicon: it has no <lexicon> element", { param: "file" });
  const alphabet = attribute(root[0], "alphabet") ?? "ipa";
  const rules: Rule[] = [];
  for (const m of file.matchAll(/<lexeme(?:\s[^>]*)?>([\s\S]*?)<\/lexeme>/g)) {
    const body = m[1]!;
    const phoneme = elements(body, "phoneme")[0];
    const alias = elements(body, "alias")[0]?.text;
    for (const { text: grapheme } of elements(body, "grapheme")) {
      if (!grapheme) continue;
      const common = { string_to_replace: grapheme, case_sensitive: true, word_boundaries: true };
      if (phoneme?.text) rules.push({ type: "phoneme", ...common, phoneme: phoneme.text, alphabet: attribute(phoneme.attrs, "alphabet") ?? alphabet, ...(alias ? { alias } : {}) });
      else if (alias) rules.push({ type: "alias", ...common, alias });
    }
  }
  if (rules.length === 0 || rules.length > MAX_RULES)
    throw new ApiError("invalid_request", `the lexicon must hold 1 to ${MAX_RULES} lexemes with a grapheme and a phoneme or alias`, { param: "file" });
  return rules;
}

export function plsOf(rules: Rule[], lang = "en-US"): string {
  const lexemes = rules.map((rule) => {
    const say =
      rule.type === "alias"
        ? `<alias>${escapeXml(rule.alias)}</alias>`
        : `<phoneme alphabet="${escapeXml(rule.alphabet)}">${escapeXml(rule.phoneme)}</phoneme>${rule.alias ? `<alias>${escapeXml(rule.alias)}</alias>` : ""}`;
    return `  <lexeme>\n    <grapheme>${escapeXml(rule.string_to_replace)}</grapheme>\n    ${say}\n  </lexeme>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="${escapeXml(lang)}">`,
    ...lexemes,
    `</lexicon>`,
    "",
  ].join("\n");
}
