import type { AudioPool } from "../pools/audio-pool.ts";
import type { EnginePool } from "../pools/engine-pool.ts";
import type { FilePool } from "../pools/file-pool.ts";
import type { EngineWorkerOptions } from "../../workers/engine-protocol.ts";
import type { CatalogueData } from "../catalogue/catalogue.ts";
import type { Logger } from "../log.ts";
import type { TtsProvider } from "./types.ts";
import type { SttProvider } from "./stt-types.ts";

// Everything about one provider, in one place (`providers/<id>/index.ts`): the environment
// variables it reads, what it puts in the catalogue, what start-up must find on this machine, and
// the factories of its adapters. The registry, the catalogue and the config iterate `all.ts`.

/** How a provider reads its settings; config.ts implements it over the environment and validates. */
export interface EnvReader {
  /** The raw value; undefined when unset (an empty string is returned as is). */
  text(name: string): string | undefined;
  /** A URL with trailing slashes trimmed; undefined when unset or empty. */
  url(name: string): string | undefined;
  flag(name: string): boolean;
  integer(name: string, fallback: number, min?: number): number;
  /** A USD amount with at most 6 decimals; undefined when unset or empty. */
  usd(name: string): string | undefined;
  /** A comma-separated list, trimmed, empty entries dropped. */
  list(name: string): string[];
}

/** What the server built that adapters run on. */
export interface ProviderRuntime {
  engines: EnginePool;
  /** The embedded recognizer's decoders (with the router VAD beside them); cloud adapters never see it. */
  audio: AudioPool;
  /** Measures and decodes uploaded files (the embedded recognizer's file decoding). */
  files: FilePool;
  /** Bounds for cloud upstreams: connect / first answer, and silence inside a response; how often a quiet recognizer socket is kept alive. */
  upstream: { connectTimeoutMs: number; idleTimeoutMs: number; keepAliveMs: number };
}

export interface ProviderHome<Id extends string = string, S = unknown, Found = undefined> {
  id: Id;
  settings(env: EnvReader): S;
  /** What start-up finds this machine can serve of it (files, libraries); logged when short. */
  probe?(settings: S, log: Logger): Promise<Found>;
  /** The finding assumed when no probe ran (catalogue tests, benchmarks). */
  unprobed?: Found;
  /** Its catalogue entries as served: none when it is not configured or not available here. */
  catalogue(settings: S, found: Found): CatalogueData;
  /** What the engine workers need of it (an embedded engine's files). */
  engineOptions?(settings: S, found: Found): Partial<EngineWorkerOptions>;
  tts?(settings: S, runtime: ProviderRuntime, found: Found): TtsProvider | undefined;
  /** Streaming and file recognition (`SttProvider.open`, `.transcribe`). */
  stt?(settings: S, runtime: ProviderRuntime, found: Found): SttProvider | undefined;
}

/** Keeps a declaration's literal id and setting types, for the config's typing. */
export const defineProvider = <Id extends string, S, Found = undefined>(home: ProviderHome<Id, S, Found>) => home;

export const NOTHING: CatalogueData = { providers: [], models: [] };
