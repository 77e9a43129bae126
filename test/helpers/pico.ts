import { existsSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDED_PICO_DIR } from "../../src/providers/local-pico/embedded.ts";
import { PICO_VOICES } from "../../src/providers/local-pico/voices.ts";

// Pico's voice files are in no npm package. The tests' servers find them as the build does
// (scripts/stage-pico-voices.ts): PICO_VOICES_DIR when it is set; else the shared models beside
// the checkout, or the copy `bun run build` staged in dist/pico-voices, whichever holds them.

const ROOT = new URL("../..", import.meta.url).pathname;
const candidates = process.env.PICO_VOICES_DIR ? [process.env.PICO_VOICES_DIR] : [join(ROOT, "../shared/models/svox-pico-lang"), join(ROOT, EMBEDDED_PICO_DIR)];
const holdsEveryVoice = (dir: string) => PICO_VOICES.every((v) => v.files.every((f) => existsSync(join(dir, f.name))));

/** The directory the tests' servers are given as PICO_VOICES_DIR. */
export const PICO_DIR = candidates.find(holdsEveryVoice) ?? candidates[0]!;

/**
 * Why tests that need Pico cannot run here, or undefined when they can. In CI (REQUIRE_PICO=1,
 * set by .ci/run) the files' absence is a failure of the file that asks; elsewhere it is said,
 * and those tests are registered as skipped with the reason in their names.
 */
export function picoMissing(): string | undefined {
  if (holdsEveryVoice(PICO_DIR)) return undefined;
  const why = `no Pico voice files in ${candidates.join(" or ")} (set PICO_VOICES_DIR)`;
  if (process.env.REQUIRE_PICO === "1") throw new Error(`SVOX Pico's voice files are required (REQUIRE_PICO=1): ${why}`);
  console.warn(`skipping SVOX Pico tests: ${why}`);
  return why;
}
