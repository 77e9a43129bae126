import type { Catalogue } from "../catalogue/catalogue.ts";
import type { TtsProvider } from "../providers/types.ts";

/**
 * The operator's voice aliases against the voices the embedded engines list (read locally, at
 * start): an alias must stand for one of them and may not take one's name. A cloud provider's list
 * is not asked for at start; its own answer judges the voice at each request.
 */
export async function checkVoiceAliases(catalogue: Catalogue, providers: ReadonlyMap<string, TtsProvider>): Promise<void> {
  for (const a of catalogue.voiceAliases) {
    for (const b of catalogue.bindings.filter((x) => x.canonical === a.model && x.provider.kind === "local")) {
      const names = await providers.get(b.provider.id)?.voiceNames?.();
      if (!names) continue;
      const where = `config: voice alias ${a.model}:${a.alias}=${a.voice}:`;
      if (!names.has(a.voice)) throw new Error(`${where} ${a.voice} is not a voice of ${b.provider.id} (its voices: ${[...names].join(", ")})`);
      if (names.has(a.alias)) throw new Error(`${where} ${a.alias} is already a voice of ${b.provider.id}; an alias may not hide it`);
    }
  }
}
