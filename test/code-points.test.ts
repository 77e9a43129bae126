import { expect, test } from "bun:test";
import { codePoints } from "../src/util/code-points.ts";

test("characters are counted as code points, as the string iterator counts them: pairs once, lone surrogates once each", () => {
  const texts = ["", "plain ASCII text.", "déjà vu — 日本語", "🎙️ voice 👍🏽", "\uD83D", "a\uDC00b", "\uD83D\uD83D\uDE00", `${"x".repeat(5000)}😀`];
  for (const text of texts) expect(codePoints(text)).toBe([...text].length);
  expect(codePoints("👍🏽")).toBe(2);
  expect(codePoints("\uD83D\uD83D\uDE00")).toBe(2);
});
