// Splits streamed text into utterances for engines that only synthesize whole utterances.

const BOUNDARY = /[.!?;:…。！？]+["')\]]*\s+|\n+/g;

/** Takes the complete sentences off the front of `buffer`; returns them and what is left. */
export function takeSentences(buffer: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let start = 0;
  for (const m of buffer.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    const sentence = buffer.slice(start, end).trim();
    if (sentence) sentences.push(sentence);
    start = end;
  }
  return { sentences, rest: buffer.slice(start) };
}
