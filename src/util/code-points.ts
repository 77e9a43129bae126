const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Characters as the meter counts them: Unicode code points, not UTF-16 code units. */
export function codePoints(text: string): number {
  // Without a high surrogate no two code units make one code point: the length is the count.
  if (!HIGH_SURROGATE.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n++;
  return n;
}
