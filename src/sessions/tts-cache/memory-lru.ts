import { type CacheEntry, entryBytes } from "./entry.ts";

/** Entries in memory, least recently used first out once their bytes pass `maxBytes`. */
export class MemoryLru {
  private readonly entries = new Map<string, { entry: CacheEntry; bytes: number }>();
  bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly evicted: (count: number) => void,
  ) {}

  get(key: string): CacheEntry | undefined {
    const kept = this.entries.get(key);
    if (!kept) return undefined;
    this.entries.delete(key);
    this.entries.set(key, kept);
    return kept.entry;
  }

  set(key: string, entry: CacheEntry): void {
    const bytes = entryBytes(entry);
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    this.entries.set(key, { entry, bytes });
    this.bytes += bytes;
    let count = 0;
    for (const [oldest, { bytes: b }] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= b;
      count++;
    }
    if (count) this.evicted(count);
  }

  get size(): number {
    return this.entries.size;
  }
}
