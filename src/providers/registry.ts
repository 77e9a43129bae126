import type { EngineWorkerOptions } from "../../workers/engine-protocol.ts";
import { foundOf, HOMES, settingOf, type ProviderFindings, type ProviderSettings } from "./all.ts";
import type { ProviderRuntime } from "./home.ts";
import type { TtsProvider } from "./types.ts";
import type { SttProvider } from "./stt-types.ts";

/** The adapters this build has, each provider's built by its own factories from its settings. */
export function providerAdapters(settings: ProviderSettings, findings: ProviderFindings, runtime: ProviderRuntime): { tts: TtsProvider[]; stt: SttProvider[] } {
  const tts: TtsProvider[] = [];
  const stt: SttProvider[] = [];
  for (const p of HOMES) {
    const [s, found] = [settingOf(settings, p), foundOf(findings, p)];
    const t = p.tts?.(s, runtime, found);
    const r = p.stt?.(s, runtime, found);
    if (t) tts.push(t);
    if (r) stt.push(r);
  }
  return { tts, stt };
}

/** What the engine workers need of each embedded engine (its files, the voices offered). */
export function engineWorkerOptions(settings: ProviderSettings, findings: ProviderFindings): Omit<EngineWorkerOptions, "scratchDir"> {
  const parts = HOMES.map((p) => p.engineOptions?.(settingOf(settings, p), foundOf(findings, p)) ?? {});
  return Object.assign({}, ...parts) as Omit<EngineWorkerOptions, "scratchDir">;
}
