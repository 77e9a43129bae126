import { readFileSync } from "node:fs";
import { aliasesOfJson, mergeAliases, modelAliasesOfText, type OperatorAliases, voiceAliasesOfText } from "../catalogue/operator-aliases.ts";
import { type Env, integer } from "./env.ts";

// What the router serves by name: the voice catalogue's refreshes and the operator's aliases.

export interface VoiceCatalogueConfig {
  /** How often every provider's voice list is asked for again. */
  refreshMs: number;
  /** How soon a provider whose list could not be had is asked again. */
  retryMs: number;
  /** Longest a provider may take to give its list. */
  listTimeoutMs: number;
  /** How often the voices' metrics are read again from the activity records. */
  metricsRefreshMs: number;
}

export function voices(env: Env): VoiceCatalogueConfig {
  return {
    refreshMs: integer(env, "VOICE_CATALOGUE_REFRESH_MS", 600_000, 100),
    retryMs: integer(env, "VOICE_CATALOGUE_RETRY_MS", 60_000, 100),
    listTimeoutMs: integer(env, "VOICE_LIST_TIMEOUT_MS", 30_000, 1),
    metricsRefreshMs: integer(env, "VOICE_METRICS_REFRESH_MS", 300_000, 100),
  };
}

/** MODEL_ALIASES, VOICE_ALIASES and ALIASES_FILE together; whether each reaches a served model is the catalogue's check. */
export function aliases(env: Env): OperatorAliases {
  const file = env.ALIASES_FILE;
  let fromFile: OperatorAliases = { models: [], voices: [] };
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new Error(`config: ALIASES_FILE ${file} cannot be read: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new Error(`config: ALIASES_FILE ${file} is not JSON: ${(err as Error).message}`);
    }
    fromFile = aliasesOfJson(json, `ALIASES_FILE ${file}`);
  }
  return mergeAliases({ models: modelAliasesOfText(env.MODEL_ALIASES), voices: voiceAliasesOfText(env.VOICE_ALIASES) }, fromFile);
}
