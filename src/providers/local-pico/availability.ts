import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { PICO_VOICES } from "./voices.ts";

// Which Pico languages this machine can speak, decided once at start-up so that the catalogue
// never offers one whose every request would fail: a voice is offered when its two files are in
// PICO_VOICES_DIR, or when PICO_VOICES_URL answers a HEAD for each missing one (within a short
// time) and the directory can keep what is fetched on first use.

/** How long start-up waits for PICO_VOICES_URL to answer about a missing file. */
export const PICO_PROBE_TIMEOUT_MS = 3000;

export interface PicoOffer {
  voices: string[];
  /** Why each other voice is not offered. */
  refused: { voice: string; reason: string }[];
}

export async function picoOffer(dir: string, url: string, timeoutMs = PICO_PROBE_TIMEOUT_MS): Promise<PicoOffer> {
  const writable = url ? directoryWritable(dir) : undefined;
  const verdicts = await Promise.all(
    PICO_VOICES.map(async ({ id, files }) => {
      const missing = files.map((f) => f.name).filter((name) => !existsSync(join(dir, name)));
      if (missing.length === 0) return { id };
      const absent = `${missing.join(" and ")} not in ${dir}`;
      if (!url) return { id, reason: `${absent}, and PICO_VOICES_URL is empty` };
      if (writable !== true) return { id, reason: `${absent}, and the directory cannot keep fetched files (${writable})` };
      const failures = (await Promise.all(missing.map((name) => probe(`${url}/${name}`, timeoutMs)))).filter((f) => f !== undefined);
      return failures.length ? { id, reason: `${absent}, and not fetchable: ${failures.join("; ")}` } : { id };
    }),
  );
  return {
    voices: verdicts.filter((v) => v.reason === undefined).map((v) => v.id),
    refused: verdicts.flatMap((v) => (v.reason === undefined ? [] : [{ voice: v.id, reason: v.reason }])),
  };
}

function directoryWritable(dir: string): true | string {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why `url` is not fetchable, or undefined when it answers. */
async function probe(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? undefined : `${url} answered HTTP ${res.status}`;
  } catch (err) {
    return `${url}: ${(err as Error).message}`;
  }
}
