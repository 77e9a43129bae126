import { codePoints } from "../../util/code-points.ts";
import type { CharacterTimes } from "../types.ts";
import { charTimes, shifted, type Anchor } from "./char-times.ts";

/**
 * The character times of one utterance an engine spoke, `from` seconds into the stream: `raw` is
 * the text the utterance stands for (white space around it included), `text` the part the engine
 * was given, `anchors` where `text` meets the utterance's audio (in code points of `text`), and
 * `duration` that audio's length. White space before the text spreads over the silence before its
 * first anchor, white space after it over the silence after its last.
 */
export function utteranceTimes(raw: string, text: string, anchors: Anchor[], from: number, duration: number): CharacterTimes {
  const offset = codePoints(raw.slice(0, raw.indexOf(text)));
  const inRaw = anchors.map((a) => ({ at: a.at + offset, seconds: a.seconds }));
  return shifted(charTimes(raw, [{ at: 0, seconds: 0 }, ...inRaw, { at: codePoints(raw), seconds: duration }]), from);
}
