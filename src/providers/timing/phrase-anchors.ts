import type { SpeechRun } from "../../audio/speech-runs.ts";
import { codePoints } from "../../util/code-points.ts";
import type { Anchor } from "./char-times.ts";

/** Where a phrase ends: punctuation (and closing quotes or brackets) followed by white space, where the engines pause. */
const PHRASE_END = /[,;:.!?…]+["')\]]*(?=\s)/g;

/**
 * Anchors an utterance's text to the stretches of speech in its audio. Phrase by phrase when the
 * text has as many phrases (cut after punctuation followed by white space) as the audio has runs,
 * each phrase spread over its run; otherwise the whole text over the first run's start to the last
 * run's end. No runs (a silent utterance): no anchors.
 */
export function phraseAnchors(text: string, runs: SpeechRun[]): Anchor[] {
  if (!runs.length) return [];
  const phrases = phrasesOf(text);
  if (phrases.length !== runs.length)
    return [
      { at: phrases[0]?.[0] ?? 0, seconds: runs[0][0] },
      { at: phrases.at(-1)?.[1] ?? codePoints(text), seconds: runs.at(-1)![1] },
    ];
  return phrases.flatMap(([start, end], i) => [
    { at: start, seconds: runs[i][0] },
    { at: end, seconds: runs[i][1] },
  ]);
}

/** The phrases of `text` as [start, end) in code points, white space around them left out. */
function phrasesOf(text: string): [number, number][] {
  const phrases: [number, number][] = [];
  let from = 0;
  const add = (end: number) => {
    const piece = text.slice(from, end);
    const lead = piece.length - piece.trimStart().length;
    const trimmed = piece.trim();
    if (trimmed) {
      const start = codePoints(text.slice(0, from + lead));
      phrases.push([start, start + codePoints(trimmed)]);
    }
    from = end;
  };
  for (const m of text.matchAll(PHRASE_END)) add(m.index + m[0].length);
  add(text.length);
  return phrases;
}
