/** Characters as the meter counts them: Unicode code points, not UTF-16 code units. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
