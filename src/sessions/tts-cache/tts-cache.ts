import type { Binding } from "../../catalogue/types.ts";
import type { Metrics } from "../../metrics.ts";
import type { TtsStream } from "../../providers/types.ts";
import { UtteranceTtsStream } from "../../providers/utterance-stream.ts";
import { CachedTtsStream } from "./cached-stream.ts";
import { DiskStore } from "./disk-store.ts";
import type { CacheEntry } from "./entry.ts";
import { cacheKey, type CacheKeyInput } from "./key.ts";
import { MemoryLru } from "./memory-lru.ts";

// The router's TTS cache (docs/tts-cache.md): utterances' audio by everything that changes it, in
// memory (LRU by bytes) and, with a directory, on disk. A session's provider stream is wrapped
// (`wrap`) when the provider may be cached and the request did not opt out.

export interface TtsCacheSettings {
  /** Bytes of entries kept in memory; 0 turns the cache off. */
  bytes: number;
  /** A directory for entries that outlive a restart. */
  dir?: string;
  dirBytes: number;
  /** `tenant`: a tenant hits only the entries its own requests made; `shared`: every tenant hits every entry. */
  scope: "tenant" | "shared";
  /** Providers whose audio may be kept: `all`, or their ids. */
  providers: "all" | readonly string[];
  /** A hit's characters cost the model's price times this (a decimal string). */
  priceFactor: string;
}

/** What of a session's setup the cache reads (`TtsSessionSetup`'s fields). */
interface SessionSound {
  cache?: boolean;
  options: Record<string, string>;
  speed?: number;
  alignment?: boolean;
}

export class TtsCache {
  private readonly memory: MemoryLru;
  private readonly disk: DiskStore | undefined;

  constructor(
    private readonly settings: TtsCacheSettings,
    private readonly metrics?: Metrics,
  ) {
    this.memory = new MemoryLru(settings.bytes, (n) => metrics?.ttsCacheEvictions.inc({ tier: "memory" }, n));
    this.disk = settings.dir ? new DiskStore(settings.dir, settings.dirBytes, (n) => metrics?.ttsCacheEvictions.inc({ tier: "disk" }, n)) : undefined;
    this.gauge();
  }

  /** Characters a session's stream played from the cache, with the price factor they are billed at; undefined when none. */
  played(stream: CachedTtsStream | undefined, before = 0): { units: number; factor: string } | undefined {
    const units = before + (stream?.cachedChars ?? 0);
    return units ? { units, factor: this.settings.priceFactor } : undefined;
  }

  /** Whether a provider's audio may be kept. */
  serves(provider: string): boolean {
    return this.settings.bytes > 0 && (this.settings.providers === "all" || this.settings.providers.includes(provider));
  }

  /** A session's provider stream through the cache, keyed with the dictionaries' version (`Lexicon.version`); undefined when the provider may not be cached or the request opted out. */
  around(stream: TtsStream, setup: SessionSound, binding: Binding, voice: string | undefined, rulesVersion: string, tenantId: string): CachedTtsStream | undefined {
    const provider = binding.provider.id;
    if (setup.cache === false || !this.serves(provider)) return undefined;
    // MP3 is kept only where each utterance is a request of its own, a whole MP3: an engine's or a
    // socket's MP3 is one encoder's stream, whose frames do not end where utterances do.
    if (stream.audioFormat.encoding === "mp3" && !(stream instanceof UtteranceTtsStream)) return undefined;
    const { options, speed, alignment } = setup;
    const { encoding, sampleRate } = stream.audioFormat;
    return this.wrap(stream, { provider, model: binding.id, voice, encoding, sampleRate, speed, options, alignment: !!alignment, rulesVersion }, tenantId);
  }

  /** `inner` with its utterances served from the cache where they are in it, and kept once spoken to their end. */
  wrap(inner: TtsStream, input: Omit<CacheKeyInput, "text" | "scope">, tenantId: string): CachedTtsStream {
    const scope = this.settings.scope === "tenant" ? tenantId : "";
    return new CachedTtsStream(inner, input.provider, {
      key: (text) => cacheKey({ ...input, scope, text }),
      get: (key) => this.get(key, input.provider),
      set: (key, entry) => this.set(key, entry),
    });
  }

  private async get(key: string, provider: string): Promise<CacheEntry | undefined> {
    let entry = this.memory.get(key);
    if (!entry && this.disk) {
      entry = await this.disk.get(key);
      if (entry) this.memory.set(key, entry);
    }
    this.metrics?.[entry ? "ttsCacheHits" : "ttsCacheMisses"].inc({ provider });
    return entry;
  }

  private set(key: string, entry: CacheEntry): void {
    this.memory.set(key, entry);
    this.gauge();
    void this.disk?.set(key, entry).then(
      () => this.gauge(),
      () => undefined,
    );
  }

  private gauge(): void {
    this.metrics?.ttsCacheBytes.set({ tier: "memory" }, this.memory.bytes);
    if (this.disk) this.metrics?.ttsCacheBytes.set({ tier: "disk" }, this.disk.bytes);
  }
}
