import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Temporary directories the tests and their helpers make, removed when the run ends
// (test/preload.ts), after every file's own afterAll: a directory a helper made once may serve
// several files, and a server a test left running may still hold its database.

const made: string[] = [];

/** A new directory in the system's temporary directory, its name starting with `prefix`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
