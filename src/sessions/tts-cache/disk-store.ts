import { mkdirSync, readdirSync, statSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { type CacheEntry, decodeEntry, encodeEntry } from "./entry.ts";

/**
 * Entries as files under one directory (`<key>.tts`), so they outlive a restart: the directory is
 * read at start, and the files least recently used go once their bytes pass `maxBytes`.
 */
export class DiskStore {
  /** Key → file size, least recently used first. */
  private readonly files = new Map<string, number>();
  bytes = 0;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly evicted: (count: number) => void,
  ) {
    mkdirSync(dir, { recursive: true });
    const found = readdirSync(dir)
      .filter((name) => name.endsWith(".tts"))
      .map((name) => ({ key: name.slice(0, -4), stat: statSync(join(dir, name)) }))
      .sort((a, b) => a.stat.mtimeMs - b.stat.mtimeMs);
    for (const { key, stat } of found) this.note(key, stat.size);
    this.trim();
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const size = this.files.get(key);
    if (size === undefined) return undefined;
    this.files.delete(key);
    this.files.set(key, size);
    try {
      return decodeEntry(new Uint8Array(await Bun.file(this.path(key)).arrayBuffer()));
    } catch {
      this.forget(key);
      return undefined;
    }
  }

  /** Written to a temporary name first: a reader never sees half a file. */
  async set(key: string, entry: CacheEntry): Promise<void> {
    const bytes = encodeEntry(entry);
    if (bytes.byteLength > this.maxBytes) return;
    const temporary = `${this.path(key)}.${crypto.randomUUID()}.part`;
    await Bun.write(temporary, bytes);
    await rename(temporary, this.path(key));
    if (this.files.has(key)) this.forget(key);
    this.note(key, bytes.byteLength);
    this.trim();
  }

  private note(key: string, size: number): void {
    this.files.set(key, size);
    this.bytes += size;
  }

  private forget(key: string): void {
    this.bytes -= this.files.get(key) ?? 0;
    this.files.delete(key);
  }

  private trim(): void {
    let count = 0;
    for (const [oldest] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(oldest);
      void rm(this.path(oldest), { force: true });
      count++;
    }
    if (count) this.evicted(count);
  }

  private path(key: string): string {
    return join(this.dir, `${key}.tts`);
  }
}
