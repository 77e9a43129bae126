import { existsSync } from "node:fs";
import { projectFile } from "../../project-file.ts";

/** Where `bun run build` puts Pico's lingware for the executable to embed (scripts/stage-pico-voices.ts). */
export const EMBEDDED_PICO_DIR = "dist/pico-voices";
/** The same directory inside the executable: `--asset` keeps the directory's own name only. */
const INSIDE = "pico-voices/";

/**
 * The lingware inside the executable, when it was built with some: the default voice directory
 * there. Read-only: voices it lacks are offered only from a PICO_VOICES_DIR. Named from the main
 * thread (project-file.ts), which hands it to the engine workers.
 */
export function embeddedPicoDir(): string | undefined {
  if (!Bun.isStandaloneExecutable) return undefined;
  const dir = projectFile(INSIDE).pathname;
  return existsSync(`${dir}LICENSE`) ? dir : undefined;
}
