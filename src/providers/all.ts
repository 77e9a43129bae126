import type { Logger } from "../log.ts";
import { assemblyai } from "./assemblyai/index.ts";
import { cartesia } from "./cartesia/index.ts";
import { deepgram } from "./deepgram/index.ts";
import { elevenlabs } from "./elevenlabs/index.ts";
import type { EnvReader, ProviderHome } from "./home.ts";
import { espeakNg } from "./local-espeak/index.ts";
import { flite } from "./local-flite/index.ts";
import { svoxPico } from "./local-pico/index.ts";
import { pocketsphinx } from "./local-pocketsphinx/index.ts";
import { openaiCompatible } from "./openai-compatible/index.ts";
import { openai } from "./openai/index.ts";

/** Every provider this build knows, in catalogue order (the order `/v1/providers` lists them). */
export const PROVIDERS = [flite, svoxPico, espeakNg, pocketsphinx, elevenlabs, openai, deepgram, cartesia, assemblyai, openaiCompatible] as const;

type Home = (typeof PROVIDERS)[number];
type SettingsOf<P> = P extends { settings(env: EnvReader): infer S } ? S : never;
type FoundOf<P> = P extends { unprobed?: infer F } ? F : never;

/** Each provider's settings, by id, as its own declaration reads them. */
export type ProviderSettings = { [P in Home as P["id"]]: SettingsOf<P> };
/** What start-up found of each provider that probes this machine. */
export type ProviderFindings = { [P in Home as P["id"]]?: FoundOf<P> };

/** A provider seen without its own settings and findings types, for code that treats them all alike. */
// biome-ignore lint/suspicious/noExplicitAny: each home's settings and findings types differ; code over the list passes them back to the same home
type AnyHome = ProviderHome<string, any, any>;

/** The list seen without each provider's own types, for code that treats them all alike. */
export const HOMES = PROVIDERS as readonly AnyHome[];

export function readProviderSettings(env: EnvReader): ProviderSettings {
  return Object.fromEntries(HOMES.map((p) => [p.id, p.settings(env)])) as ProviderSettings;
}

export async function probeProviders(settings: ProviderSettings, log: Logger): Promise<ProviderFindings> {
  const probed = await Promise.all(HOMES.filter((p) => p.probe).map(async (p) => [p.id, await p.probe!(settingOf(settings, p), log)] as const));
  return Object.fromEntries(probed) as ProviderFindings;
}

/** `p`'s own settings (typed loosely: they go back to `p`). */
export const settingOf = (settings: ProviderSettings, p: AnyHome): ReturnType<AnyHome["settings"]> => (settings as Record<string, unknown>)[p.id];

/** What start-up found of `p`, or what is assumed of it when nothing was probed. */
export const foundOf = (findings: ProviderFindings, p: AnyHome): AnyHome["unprobed"] => (p.id in findings ? (findings as Record<string, unknown>)[p.id] : p.unprobed);
