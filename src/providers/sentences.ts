// Splits streamed text into utterances for engines that only synthesize whole utterances.

const BOUNDARY = /[.!?;:…。！？]+["')\]]*\s+|\n+/g;

/**
 * The longest utterance, in UTF-16 code units. An utterance is synthesized in one piece, so a run-on
 * text (no sentence end for pages) is cut at white space: one utterance's audio stays a few
 * hundred kilobytes, which is what a client that stops reading can leave the server holding
 * beyond the backlog bound (audio-backlog.ts).
 */
export const MAX_UTTERANCE = 500;

/** Takes the complete sentences off the front of `buffer`; returns them and what is left. */
export function takeSentences(buffer: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let start = 0;
  for (const m of buffer.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    sentences.push(...pieces(buffer.slice(start, end)));
    start = end;
  }
  let rest = buffer.slice(start);
  while (rest.length > MAX_UTTERANCE) {
    const cut = cutBefore(rest, MAX_UTTERANCE);
    const piece = rest.slice(0, cut).trim();
    if (piece) sentences.push(piece);
    rest = rest.slice(cut);
  }
  return { sentences, rest };
}

/** A sentence as utterances of at most MAX_UTTERANCE. */
function pieces(sentence: string): string[] {
  const out: string[] = [];
  let rest = sentence.trim();
  while (rest.length > MAX_UTTERANCE) {
    const cut = cutBefore(rest, MAX_UTTERANCE);
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/** The end of the first sentence in `text` that ends past `from` and at most at `max`, if any. */
export function sentenceEndBetween(text: string, from: number, max: number): number | undefined {
  for (const m of text.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    if (end > max) return undefined;
    if (end > from) return end;
  }
}

/**
 * Where to cut `text` so the first part is at most `max` long (and not empty): after its last
 * sentence end, else its last white space, else at `max` itself (never inside a surrogate pair).
 */
export function cutBefore(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const head = text.slice(0, max + 1);
  let sentenceEnd = 0;
  for (const m of head.matchAll(BOUNDARY)) if (m.index + m[0].length <= max) sentenceEnd = m.index + m[0].length;
  if (sentenceEnd > 0) return sentenceEnd;
  const space = head.search(/\s\S*$/);
  if (space > 0) return space;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}
