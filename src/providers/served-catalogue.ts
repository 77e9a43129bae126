import { foundOf, HOMES, settingOf, type ProviderFindings, type ProviderSettings } from "./all.ts";
import type { CatalogueData } from "../catalogue/catalogue.ts";

/**
 * What this deployment can actually serve, each provider deciding from its settings and what
 * start-up found (Flite always, Pico with the voices it can load, eSpeak NG only when opted in,
 * PocketSphinx only when installed, a cloud provider only when configured). Every shipped model is
 * known even when its provider is not served: other entries (a test's backup) may bind it.
 */
export function servedCatalogue(config: { providers: ProviderSettings }, findings: ProviderFindings = {}): CatalogueData {
  const parts = HOMES.map((p) => p.catalogue(settingOf(config.providers, p), foundOf(findings, p)));
  return { providers: parts.flatMap((c) => c.providers), models: parts.flatMap((c) => c.models) };
}
